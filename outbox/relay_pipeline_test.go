package outbox_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// While the backlog fills its claims, Run settles a full claim (delete,
// commit, release of the marks) while the next pass claims and pushes:
// a settle held at its start sees the next pass's push land. The pushes
// stay in the order of the claims, every job once, every row deleted and
// every mark released.
func TestRunPushesTheNextClaimWhileAFullOneSettles(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const n, batch = 300, 50
		var want []string
		for range 3 {
			b.tx(t, true, func(tx *sql.Tx) {
				jobs := make([]mailJob, n/3)
				for i := range jobs {
					jobs[i] = mailJob{To: fmt.Sprint(len(want) + i)}
				}
				ids, err := runtime.DispatchManyTx(b.ctx, tx, jobs)
				require.NoError(t, err)
				want = append(want, ids...)
			})
		}
		r, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: b.db, Batch: batch})
		require.NoError(t, err)
		// The second settle waits, before it deletes anything, for the
		// next pass's push. (Not the first: Run reconciles after its
		// first pass, which waits for that pass's settle.)
		overlapped := make(chan bool, 1)
		settles := 0
		r.AfterPush(func() error {
			if settles++; settles != 2 {
				return nil
			}
			deadline := time.Now().Add(10 * time.Second)
			for r.Counts().Relayed <= 2*batch && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			overlapped <- r.Counts().Relayed > 2*batch
			return nil
		})
		ctx, cancel := context.WithCancel(b.ctx)
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		require.True(t, <-overlapped, "the next pass pushed nothing while a full claim settled")
		require.Eventually(t, func() bool {
			if b.rows(t) != 0 {
				return false
			}
			for _, s := range b.marks(t, "mail") {
				if s >= 1e15 {
					return false // pending
				}
			}
			return true
		}, 10*time.Second, 10*time.Millisecond)
		cancel()
		require.NoError(t, <-done)
		require.Equal(t, int64(n), r.Counts().Relayed)
		require.Zero(t, r.Counts().Skipped)
		var got []string
		for {
			res := b.reserve(t, "mail", 500)
			if len(res.Jobs) == 0 {
				break
			}
			for _, j := range res.Jobs {
				got = append(got, j.ID)
			}
		}
		require.Equal(t, want, got)
	})
}
