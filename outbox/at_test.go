package outbox_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// At(t) through the outbox: the row holds t, and the relay reads it
// against the database's clock. A job at a time 3s after the database's
// now is due then, whatever the transaction's length, and not 3s after
// the commit; one whose time passed while its transaction ran is ready
// at once; one at a time long past is ready at once. DispatchManyTx
// carries At to each job.
func TestAtThroughTheOutbox(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var dbNow time.Time
		require.NoError(t, b.db.QueryRowContext(b.ctx, "SELECT clock_timestamp()").Scan(&dbNow))
		at := dbNow.Add(3 * time.Second)
		passed := dbNow.Add(time.Second)
		var future, during, past string
		var many []string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			future, err = runtime.NewPendingDispatch(mailJob{To: "future"}).At(at).DispatchTx(b.ctx, tx)
			require.NoError(t, err)
			during, err = runtime.NewPendingDispatch(mailJob{To: "during"}).At(passed).DispatchTx(b.ctx, tx)
			require.NoError(t, err)
			past, err = runtime.NewPendingDispatch(mailJob{To: "past"}).At(dbNow.Add(-time.Hour)).DispatchTx(b.ctx, tx)
			require.NoError(t, err)
			many, err = runtime.NewPendingMany([]mailJob{{To: "m1"}, {To: "m2"}}).At(at).DispatchTx(b.ctx, tx)
			require.NoError(t, err)
			_, err = tx.ExecContext(b.ctx, "SELECT pg_sleep(2)")
			require.NoError(t, err)
		})
		var runAt int
		require.NoError(t, b.db.QueryRowContext(b.ctx, "SELECT count(*) FROM "+b.table+" WHERE run_at IS NOT NULL").Scan(&runAt))
		require.Equal(t, 5, runAt, "each row holds its time")
		b.relayAll(t)

		delayed := b.keys.Queue("mail").Delayed
		for _, id := range append([]string{future}, many...) {
			due, err := b.rdb.ZScore(b.ctx, delayed, id).Result()
			require.NoError(t, err, "job %s is delayed", id)
			// The relay pushed it with the delay left by the database's
			// clock, which Redis adds to its own (both clocks are this
			// machine's): due at t, plus the push's own lag, and not 3s
			// after the commit, which came 2s after dbNow.
			require.GreaterOrEqual(t, int64(due), at.UnixMilli()-1, "due %s, before At %s", time.UnixMilli(int64(due)).Format(time.StampMilli), at.Format(time.StampMilli))
			require.Less(t, int64(due), at.Add(2*time.Second).UnixMilli(), "due %s: counted from the commit, not At %s", time.UnixMilli(int64(due)).Format(time.StampMilli), at.Format(time.StampMilli))
		}
		ready, err := b.rdb.LRange(b.ctx, b.keys.Queue("mail").Ready, 0, -1).Result()
		require.NoError(t, err)
		require.ElementsMatch(t, []string{during, past}, ready, "the jobs whose time had passed are ready at once")
	})
}

// At on a Dispatch straight to Redis: due at t; a t past is ready at
// once.
func TestAtThroughDispatch(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		ctx := runtime.WithDispatcher(b.ctx, b.engine)
		at := time.Now().Add(time.Minute)
		future, err := runtime.NewPendingDispatch(mailJob{To: "future"}).At(at).Dispatch(ctx)
		require.NoError(t, err)
		past, err := runtime.NewPendingDispatch(mailJob{To: "past"}).At(time.Now().Add(-time.Hour)).Dispatch(ctx)
		require.NoError(t, err)
		due, err := b.rdb.ZScore(b.ctx, b.keys.Queue("mail").Delayed, future).Result()
		require.NoError(t, err)
		require.GreaterOrEqual(t, int64(due), at.UnixMilli()-1)
		require.Less(t, int64(due), at.Add(30*time.Second).UnixMilli())
		ready, err := b.rdb.LRange(b.ctx, b.keys.Queue("mail").Ready, 0, -1).Result()
		require.NoError(t, err)
		require.Equal(t, []string{past}, ready)
	})
}
