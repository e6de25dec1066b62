package runtime

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// RunWithSignals runs the worker as Run does, with Laravel's signals:
// SIGTERM or SIGINT stops it gracefully (no new jobs; running ones finish
// within Grace, then are released), SIGUSR2 pauses it and SIGCONT resumes
// it.
func (w *Worker) RunWithSignals(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	ch := make(chan os.Signal, 4)
	notifyPause(ch)
	defer signal.Stop(ch)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-ch:
				if isPauseSignal(s) {
					w.log.Info("paused by signal", "signal", s.String())
					w.Pause()
				} else {
					w.log.Info("resumed by signal", "signal", s.String())
					w.Resume()
				}
			}
		}
	}()
	return w.Run(ctx)
}
