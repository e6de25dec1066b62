package laravel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// A chain dispatched by Laravel (Queueable::chain) continues on a Go
// worker: each link runs after the one before it, pushed with the rest
// of the chain as Laravel's dispatchNextJobInChain does; a chain with a
// link the Go side does not know is left on its queue, untouched, before
// anything of it runs, for Laravel's worker.
func TestChainFromLaravel(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b.run(t, ctx, "push_chain.php", "chained")

	rec := newRecorder(-1)
	goWorker := func() *laravel.Worker {
		w, err := laravel.NewWorker(b.q, newMapper(), rec.router(), laravel.WorkerConfig{
			Queues: []string{"chained"}, StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed(),
		})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
		return w
	}
	// The first chain's first link runs; the second chain, first now, is
	// left for Laravel's worker, and the Go worker stops there.
	w := goWorker()
	require.Equal(t, map[string]int{"SendWelcomeEmail|1|one@example.com|chain": 1}, rec.seen)
	require.GreaterOrEqual(t, w.LeftForPHP()[`App\Jobs\SendWelcomeEmail (chain Go cannot continue)`], int64(1))
	sizes, err := b.q.Sizes(ctx, "chained")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{Ready: 2}, sizes, "the second chain's head, then the first's next link")

	// Laravel's worker takes the second chain's head; the Go worker then
	// runs the rest of the first chain.
	b.run(t, ctx, "work.php", "chained", "1", "60", "1", "1", "0")
	require.Equal(t, []string{"ran|SendWelcomeEmail|4|four@example.com||1"}, trimTimes(b.results(t, ctx)))
	goWorker()
	require.Equal(t, map[string]int{
		"SendWelcomeEmail|1|one@example.com|chain":   1,
		"ResizeAvatar|2|2|NULL":                      1,
		"SendWelcomeEmail|3|three@example.com|chain": 1,
	}, rec.seen)
	failed, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
	require.NoError(t, err)
	require.Zero(t, failed)
	sizes, err = b.q.Sizes(ctx, "chained")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{}, sizes)
}

// The links a Go worker pushes are Laravel's: Laravel's worker runs the
// rest of a chain that a Go worker started.
func TestChainHandsOverToLaravel(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b.run(t, ctx, "push_chain.php", "chained")
	rec := newRecorder(-1)
	w, err := laravel.NewWorker(b.q, newMapper(), rec.router(), laravel.WorkerConfig{
		Queues: []string{"chained"}, MaxJobs: 1, Failed: runtime.NewInspector(b.engine).Failed(),
	})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx)) // the first link of the first chain
	require.Equal(t, map[string]int{"SendWelcomeEmail|1|one@example.com|chain": 1}, rec.seen)

	b.run(t, ctx, "work.php", "chained", "1", "60", "0", "1", "0")
	require.Equal(t, []string{
		"ran|SendWelcomeEmail|4|four@example.com||1",
		"ran|ResizeAvatar|2|2|NULL|1", // pushed by the Go worker
		"ran|SendWelcomeEmail|3|three@example.com|chain|1",
	}, trimTimes(b.results(t, ctx)))
	// The second chain has no queue of its own: its next job went to the
	// connection's default queue, as Laravel sends it.
	sizes, err := b.q.Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{Ready: 1}, sizes)
}

// trimTimes drops the PHP reports that are events, and the time of each
// attempt report.
func trimTimes(lines []string) []string {
	var out []string
	for _, l := range lines {
		switch {
		case len(l) > 4 && l[:4] == "ran|":
			out = append(out, l)
		case len(l) > 8 && l[:8] == "attempt|":
			out = append(out, l[:len(l)-len(l[lastBar(l):])])
		}
	}
	return out
}

func lastBar(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '|' {
			return i
		}
	}
	return len(s)
}
