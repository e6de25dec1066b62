package dashboard_test

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// The batches page lists from the batch index; a batch the index no
// longer holds, whose jobs still wait, is found by the look for older
// batches the page links to.
func TestOlderBatchesAreFoundOnAsking(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{Logger: quiet})
	listed, err := runtime.NewBatch(note{Text: "a"}).Dispatch(b.ctx)
	require.NoError(t, err)
	older, err := runtime.NewBatch(note{Text: "b"}).Dispatch(b.ctx)
	require.NoError(t, err)
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Addr(t)})
	defer rdb.Close()
	require.EqualValues(t, 1, rdb.ZRem(b.ctx, b.engine.Config().Prefix+":batches", older).Val(), "the index forgets it")

	_, body, _ := b.get(t, "batches")
	require.Contains(t, body, listed)
	require.NotContains(t, body, older)
	require.Contains(t, body, `href="./batches?older=1" id="older-batches"`)

	_, body, _ = b.get(t, "batches?older=1")
	require.Contains(t, body, listed)
	require.Contains(t, body, older)
	require.NotContains(t, body, `id="batches-stopped"`)
}
