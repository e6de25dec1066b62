package outbox_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// downWaker is a listener whose connection is down: its Wait fails at
// once, as pgxoutbox.Listener's does until it has connected again.
type downWaker struct{}

func (downWaker) Wait(context.Context) error { return errors.New("listener down: connection refused") }

// While its waker is down, notifies are lost, so a relay looks for rows
// at a short interval of its own rather than sleeping out its poll, an
// hour here.
func TestRelayLooksWhileItsWakerIsDown(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		r, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: b.db, Wake: downWaker{}, Poll: time.Hour, Hold: 5 * time.Millisecond})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(b.ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		defer func() { cancel(); require.NoError(t, <-done) }()
		// The relay's first pass finds nothing and it waits.
		time.Sleep(50 * time.Millisecond)
		b.tx(t, true, func(tx *sql.Tx) {
			_, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "a@b"})
			require.NoError(t, err)
		})
		require.Eventually(t, func() bool { return b.sizes(t, "mail").Ready == 1 }, 30*time.Second, 10*time.Millisecond,
			"the row waited for the relay's poll, an hour away")
	})
}
