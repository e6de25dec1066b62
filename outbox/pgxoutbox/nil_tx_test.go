package pgxoutbox_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/outbox/pgxoutbox"
	"github.com/jobgen/jobgen/runtime"
)

// pgxoutbox.Tx of a nil pgx.Tx, typed or not, gives a Tx that DispatchTx
// refuses with an error naming it; it used to panic.
func TestTxOfNilIsRefused(t *testing.T) {
	b := setup(t)
	var typed *pgxpool.Tx
	for _, tx := range []runtime.Tx{pgxoutbox.Tx(nil), pgxoutbox.Tx(typed)} {
		_, err := runtime.DispatchTx(b.ctx, tx, receipt{Order: 1})
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "pgxoutbox.Tx(nil)")
		_, err = runtime.DispatchManyTx(b.ctx, tx, []receipt{{Order: 1}})
		require.ErrorIs(t, err, runtime.ErrInvalid)
	}
}
