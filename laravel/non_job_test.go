package laravel_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// nonJobs are payloads that are valid JSON but no Laravel job, each with
// what the failure says of it. Laravel's pop drops all but the last,
// which it can reserve (its attempts is a number).
var nonJobs = []struct{ payload, why string }{
	{`[1,2,3]`, "it is a JSON array, not an object"},
	{`"hello"`, "it is a JSON string, not an object"},
	{`{}`, `it has no "job" naming the class (or Class@method) to run`},
	{`{"job":"App\\Jobs\\Unknown","data":{}}`, `its "attempts" is missing or not a number`},
	{`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":[],"attempts":0}`, "its data has no commandName and command"},
}

// A payload that is valid JSON but no job blocks no queue: a Go worker
// fails it into the failed store, saying what is wrong, whatever
// FailUnmapped says, and runs the job behind it. Laravel's own pop drops
// such a payload without a trace (its script fails after the LPOP).
func TestNonJobPayloadIsFailed(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, nj := range nonJobs {
		require.NoError(t, b.q.Push(ctx, "default", []byte(nj.payload)))
	}
	b.run(t, ctx, "push.php", "1", "default") // SendWelcomeEmail 0, behind them

	rec := newRecorder(-1)
	w, err := laravel.NewWorker(b.q, newMapper(), rec.router(), laravel.WorkerConfig{
		StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed(),
	})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
	require.Equal(t, map[string]int{wantJob(0): 1}, rec.seen, "the job behind them ran")
	sizes, err := b.q.Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{}, sizes)
	require.Empty(t, w.Unmapped(), "none was taken for a PHP job")

	list, err := runtime.NewInspector(b.engine).Failed().List(ctx, "laravel", 0, 10)
	require.NoError(t, err)
	var got, want []string
	for _, fj := range list {
		env, err := runtime.DecodeEnvelope(fj.Queue, fj.ID, fj.Payload)
		require.NoError(t, err)
		rq, err := runtime.Decode[laravel.Requeue](env.Body)
		require.NoError(t, err)
		got = append(got, string(rq.Payload))
		require.Contains(t, fj.Error, "the payload is not a Laravel job")
		for _, nj := range nonJobs {
			if nj.payload == string(rq.Payload) {
				require.Contains(t, fj.Error, nj.why, nj.payload)
			}
		}
	}
	for _, nj := range nonJobs {
		want = append(want, nj.payload)
	}
	slices.Sort(got)
	slices.Sort(want)
	require.Equal(t, want, got, "each failed, with the payload as it was pushed")

	// Laravel's pop, on the same payloads: each pop drops one and
	// returns no job; nothing is reserved, nothing recorded.
	dropped := nonJobs[:len(nonJobs)-1]
	for _, nj := range dropped {
		require.NoError(t, b.q.Push(ctx, "php", []byte(nj.payload)))
	}
	require.NoError(t, b.q.Client().Set(ctx, b.prefix+"stop", "1", 0).Err())
	for range dropped {
		b.run(t, ctx, "pop.php", "php", "0", "stop")
	}
	sizes, err = b.q.Sizes(ctx, "php")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{}, sizes, "Laravel's pop dropped them")
	require.Zero(t, countPrefix(b.results(t, ctx), "popped|"), "and popped none")
}
