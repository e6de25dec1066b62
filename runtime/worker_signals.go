package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/jobgen/jobgen/internal/notes"
)

// RunWithSignals runs the worker as Run does, with Laravel's signals:
// SIGTERM or SIGINT stops it gracefully (no new jobs; running ones finish
// within Grace, then are released), SIGUSR2 pauses it and SIGCONT resumes
// it.
func (w *Worker) RunWithSignals(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stops := make(chan os.Signal, 1)
	signal.Notify(stops, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(stops)
	go func() {
		select {
		case <-ctx.Done():
		case s := <-stops:
			w.logStopSignal(s)
			cancel(stopSignal{s})
		}
	}()
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

// stopSignal is the cause of a RunWithSignals context ended by a signal.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return signalName(s.sig) + " received" }

// signalName is the signal's conventional name: SIGTERM, SIGINT.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return s.String()
}

// stopReasonOf is the stop reason for ctx's end: the signal that ended
// it under RunWithSignals, else "context done".
func stopReasonOf(ctx context.Context) string {
	var s stopSignal
	if errors.As(context.Cause(ctx), &s) {
		return signalName(s.sig)
	}
	return "context done"
}

// tellRestart sends the note of a restart broadcast, after its mark is
// set: workers read the mark at once (worker_notify.go). A note that
// cannot be sent is an error, though the broadcast is made: workers find
// it within restartPoll.
func (e *Engine) tellRestart(ctx context.Context) error {
	if _, err := e.store.Publish(ctx, e.keys.Notes(), notes.Restart); err != nil {
		return fmt.Errorf("the restart broadcast is made, but its note to the workers failed: they find the broadcast within %v, so do not make it again (%w)", restartPoll, err)
	}
	return nil
}
