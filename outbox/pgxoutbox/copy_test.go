package pgxoutbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/outbox/pgxoutbox"
	"github.com/jobgen/jobgen/runtime"
)

// uniqueReceipt is a receipt whose key is its order.
type uniqueReceipt struct {
	Order int
	Key   string
}

func (uniqueReceipt) JobName() string    { return "test.UniqueReceipt" }
func (j uniqueReceipt) UniqueID() string { return j.Key }
func (j uniqueReceipt) JobOptions() runtime.JobOptions {
	o := runtime.JobOptions{Queue: "receipts"}
	if j.Key != "" {
		o.UniqueFor = time.Minute
	}
	return o
}
func (j uniqueReceipt) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// copier counts the COPYs of the pgx transaction it wraps.
type copier struct {
	runtime.Tx
	copies, rows int
}

func (c *copier) CopyRows(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	c.copies++
	c.rows += len(rows)
	return c.Tx.(interface {
		CopyRows(context.Context, string, []string, [][]any) (int64, error)
	}).CopyRows(ctx, table, columns, rows)
}

// DispatchManyTx through a pgx transaction copies the jobs of no unique
// key in one COPY, and writes the unique ones apart, so that a duplicate
// is still left out and reported, and the transaction stays usable. The
// relay pushes every job copied.
func TestDispatchManyTxCopies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A committed row holds key "held".
	require.NoError(t, pgx.BeginFunc(b.ctx, b.pool, func(tx pgx.Tx) error {
		_, err := runtime.DispatchTx(b.ctx, pgxoutbox.Tx(tx), uniqueReceipt{Order: -1, Key: "held"})
		return err
	}))

	jobs := make([]uniqueReceipt, 0, 1003)
	for i := range 1000 {
		jobs = append(jobs, uniqueReceipt{Order: i})
	}
	jobs = append(jobs, uniqueReceipt{Order: 1000, Key: "held"}, uniqueReceipt{Order: 1001, Key: "new"}, uniqueReceipt{Order: 1002, Key: "new"})
	c := &copier{}
	require.NoError(t, pgx.BeginFunc(b.ctx, b.pool, func(tx pgx.Tx) error {
		c.Tx = pgxoutbox.Tx(tx)
		ids, err := runtime.DispatchManyTx(b.ctx, c, jobs)
		var many *runtime.DispatchManyError
		require.ErrorAs(t, err, &many)
		require.Equal(t, []int{1000, 1002}, many.Failed())
		require.ErrorIs(t, err, runtime.ErrDuplicate)
		require.Empty(t, ids[1000])
		require.NotEmpty(t, ids[1001])
		require.Empty(t, ids[1002])
		for _, id := range ids[:1000] {
			require.NotEmpty(t, id)
		}
		// The transaction is not aborted.
		_, err = runtime.DispatchTx(b.ctx, c, uniqueReceipt{Order: 2000})
		return err
	}))
	require.Equal(t, 1, c.copies)
	require.Equal(t, 1000, c.rows)

	relay, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: b.db})
	require.NoError(t, err)
	for {
		n, err := relay.RelayOnce(b.ctx)
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}
	// The held row, the 1,000 copied, "new" and the one after.
	require.Equal(t, int64(1003), b.ready(t))
	require.Equal(t, int64(0), relay.Counts().Dropped)
	res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "receipts", 2000, time.Minute)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, j := range res.Jobs {
		env, err := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
		require.NoError(t, err)
		r, err := runtime.Decode[uniqueReceipt](env.Body)
		require.NoError(t, err)
		require.False(t, seen[r.Order], "job %d twice", r.Order)
		seen[r.Order] = true
	}
	for i := range 1000 {
		require.True(t, seen[i], "job %d copied but not pushed", i)
	}
}
