package outbox_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// DispatchTx reports a duplicate unique job to its caller, as Dispatch
// does, wherever it can be known at insert: a row waiting in the outbox
// holds the key (in the same transaction or a committed one), or the
// lock in Redis does. The transaction stays usable. It used to return an
// ID, and the relay dropped the job later with a WARN.
func TestDispatchTxReportsADuplicateUniqueJob(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var first string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			first, err = runtime.DispatchTx(b.ctx, tx, mailJob{To: "first", Unique: "user-7"})
			require.NoError(t, err)
			// The same key in the same transaction: the row waiting holds it.
			_, err = runtime.DispatchTx(b.ctx, tx, mailJob{To: "again", Unique: "user-7"})
			var dup *runtime.DuplicateError
			require.ErrorAs(t, err, &dup)
			require.Equal(t, first, dup.HolderID)
			require.Equal(t, "test.Mail:user-7", dup.Key)
			// The transaction is not aborted.
			_, err = runtime.DispatchTx(b.ctx, tx, mailJob{To: "other", Unique: "user-8"})
			require.NoError(t, err)
		})
		// A committed row, not relayed yet, holds the key.
		b.tx(t, false, func(tx *sql.Tx) {
			_, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "later", Unique: "user-7"})
			require.ErrorIs(t, err, runtime.ErrDuplicate)
		})
		require.Equal(t, 2, b.rows(t))
		b.relayAll(t)
		require.Equal(t, int64(0), b.relay.Counts().Dropped)

		// Relayed, the lock in Redis holds it.
		b.tx(t, false, func(tx *sql.Tx) {
			_, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "after", Unique: "user-7"})
			var dup *runtime.DuplicateError
			require.ErrorAs(t, err, &dup)
			require.Equal(t, first, dup.HolderID)
		})

		// Many: the duplicates are left out and named, the others written.
		b.tx(t, true, func(tx *sql.Tx) {
			ids, err := runtime.DispatchManyTx(b.ctx, tx, []mailJob{
				{To: "a", Unique: "user-9"}, {To: "b", Unique: "user-9"}, {To: "c"}, {To: "d", Unique: "user-8"},
			})
			var many *runtime.DispatchManyError
			require.ErrorAs(t, err, &many)
			require.Equal(t, []int{1, 3}, many.Failed())
			require.ErrorIs(t, err, runtime.ErrDuplicate)
			require.NotEmpty(t, ids[0])
			require.Empty(t, ids[1])
			require.NotEmpty(t, ids[2])
			require.Empty(t, ids[3])
		})
		require.Equal(t, 2, b.rows(t))
	})
}
