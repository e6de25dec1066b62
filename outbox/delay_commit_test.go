package outbox_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A delay is counted from the commit, not from the transaction's start:
// a job delayed 2s in a transaction that takes 2.5s is due no earlier
// than 2s after its commit. It used to be due 2s after the transaction
// began, so before the commit.
func TestDelayCountsFromTheCommit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const delay = 2 * time.Second
		var id string
		var beforeCommit time.Time
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			id, err = runtime.NewPendingDispatch(mailJob{To: "late"}).Delay(delay).DispatchTx(b.ctx, tx)
			require.NoError(t, err)
			_, err = tx.ExecContext(b.ctx, "SELECT pg_sleep(2.5)")
			require.NoError(t, err)
			beforeCommit, err = b.rdb.Time(b.ctx).Result()
			require.NoError(t, err)
		})
		b.relayAll(t)
		due, err := b.rdb.ZScore(b.ctx, b.keys.Queue("mail").Delayed, id).Result()
		require.NoError(t, err, "the job is delayed")
		require.GreaterOrEqual(t, int64(due), beforeCommit.Add(delay).UnixMilli(),
			"due %s, before the commit + %s (%s)", time.UnixMilli(int64(due)).Format(time.StampMilli), delay, beforeCommit.Add(delay).Format(time.StampMilli))
	})
}
