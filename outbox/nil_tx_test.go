package outbox_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// A typed nil transaction, (*sql.Tx)(nil), is refused with an error that
// names it; it used to panic inside database/sql.
func TestDispatchTxRefusesATypedNilTransaction(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var tx *sql.Tx
		_, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "a"})
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "nil *sql.Tx")

		_, err = runtime.DispatchManyTx(b.ctx, tx, []mailJob{{To: "a"}, {To: "b"}})
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "nil *sql.Tx")

		_, err = runtime.DispatchTx(b.ctx, nil, mailJob{To: "a"})
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.Equal(t, 0, b.rows(t))
	})
}
