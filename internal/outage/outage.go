package outage

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Retry runs settle, and runs it again when it fails (Redis is down,
// say): 10 ms later at first, then up to a second apart, for as long as
// the jobs' leases may last, lease from the first try, as a heartbeat
// renewed them at most that long before. A settle that gets through in
// that time spares the jobs a second run, and a job whose tries are used
// up a failure as an attempt that did not finish. Once stopping says
// true, it gives up after 5 tries, so that a stopping worker does not
// wait on a Redis that is down. An error that wraps lost (a lost lease)
// is an answer, returned at once, and so is the end of ctx.
//
// It logs to log, under what and attrs, the first failure and a success
// after one.
func Retry(ctx context.Context, lease time.Duration, lost error, stopping func() bool, log *slog.Logger, what string, settle func() error, attrs ...any) error {
	delay := 10 * time.Millisecond
	until := time.Now().Add(lease)
	for try := 1; ; try++ {
		err := settle()
		switch {
		case err == nil:
			if try > 1 {
				log.Info(what+" went through", append(attrs, "tries", try)...)
			}
			return nil
		case errors.Is(err, lost), ctx.Err() != nil,
			!time.Now().Add(delay).Before(until), try >= 5 && stopping():
			return err
		case try == 1:
			log.Warn(what+" failed; trying again", append(attrs, "err", err)...)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		delay = min(2*delay, time.Second)
	}
}
