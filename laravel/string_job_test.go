package laravel_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// ImportRow is the string job App\Jobs\ImportRow@handle: its data is
// JSON, no PHP serialization.
type ImportRow struct {
	File string `json:"file"`
	Row  int    `json:"row"`
}

func (ImportRow) JobName() string                { return "test.ImportRow" }
func (ImportRow) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "imports"} }
func (j ImportRow) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// String jobs cross both ways: PHP pushes them for a Go worker, and Go
// dispatches them for Laravel's worker.
func TestStringJobs(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := laravel.NewMapper()
	laravel.MapString[ImportRow](m, `App\Jobs\ImportRow@handle`, ImportRow{}.JobName())

	const n = 50
	b.run(t, ctx, "push_string.php", fmt.Sprint(n), "imports")
	var mu sync.Mutex
	var got []string
	r := runtime.NewRouter()
	runtime.Register(r, ImportRow{}.JobName(), func(ctx context.Context, j ImportRow) error {
		mu.Lock()
		got = append(got, fmt.Sprintf("%s|%d", j.File, j.Row))
		mu.Unlock()
		return nil
	})
	w, err := laravel.NewWorker(b.q, m, r, laravel.WorkerConfig{Queues: []string{"imports"}, StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed()})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("rows%d.csv|%d", i, i))
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)

	d, err := laravel.NewDispatcher(b.q, m)
	require.NoError(t, err)
	want = want[:0]
	for i := range n {
		_, err := dispatch(ctx, d, runtime.NewPendingDispatch(ImportRow{File: fmt.Sprintf("go%d.csv", i), Row: i}))
		require.NoError(t, err)
		want = append(want, fmt.Sprintf("ran|ImportRow|go%d.csv|%d|1", i, i))
	}
	b.run(t, ctx, "work.php", "imports", "1", "60", "0", "1", "0")
	var ran []string
	for _, l := range b.results(t, ctx) {
		if strings.HasPrefix(l, "ran|ImportRow|") {
			ran = append(ran, l)
		}
	}
	sort.Strings(ran)
	sort.Strings(want)
	require.Equal(t, want, ran)
}
