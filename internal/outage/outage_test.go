package outage

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

var (
	errDown = errors.New("down")
	errLost = errors.New("lost")
	quiet   = slog.New(slog.NewTextHandler(io.Discard, nil))
)

func TestRetryGoesOnThroughAnOutage(t *testing.T) {
	tries := 0
	err := Retry(context.Background(), time.Minute, errLost, func() bool { return false }, quiet, "ack", func() error {
		if tries++; tries < 3 {
			return errDown
		}
		return nil
	})
	if err != nil || tries != 3 {
		t.Fatalf("Retry = %v after %d tries; want nil after 3", err, tries)
	}
}

func TestRetryStopsAtALostLeaseAndWhenStopping(t *testing.T) {
	tries := 0
	err := Retry(context.Background(), time.Minute, errLost, func() bool { return false }, quiet, "ack", func() error {
		tries++
		return errLost
	})
	if !errors.Is(err, errLost) || tries != 1 {
		t.Fatalf("lost lease: Retry = %v after %d tries", err, tries)
	}
	tries = 0
	err = Retry(context.Background(), time.Minute, errLost, func() bool { return true }, quiet, "ack", func() error {
		tries++
		return errDown
	})
	if !errors.Is(err, errDown) || tries != 5 {
		t.Fatalf("stopping: Retry = %v after %d tries; want 5", err, tries)
	}
}
