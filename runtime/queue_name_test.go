package runtime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestValidateQueueName(t *testing.T) {
	cases := []struct {
		name, err string
	}{
		{"emails", ""},
		{"emails.high-1:x/y", ""},
		{"", "queue name is empty"},
		{strings.Repeat("q", 201), "is longer than 200 bytes"},
		{"a{b", `queue name "a{b" contains "{", which would break its cluster hash tag`},
		{"a}b", `queue name "a}b" contains "}", which would break its cluster hash tag`},
		{"a#b", `queue name "a#b" contains "#", which is kept for the names of partitions`},
		{"emails#2", `queue name "emails#2" contains "#"`},
		{"#", `queue name "#" contains "#"`},
	}
	for _, c := range cases {
		err := runtime.ValidateQueueName(c.name)
		if c.err == "" {
			require.NoError(t, err, c.name)
			continue
		}
		require.ErrorIs(t, err, runtime.ErrInvalid, c.name)
		require.ErrorContains(t, err, c.err)
	}
}

// Every way a queue is named rejects a name with # or a brace, saying
// which; Engine methods also take partition names, and only those.
func TestQueueNamesRejected(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		for _, q := range []string{"a#b", "a{b}"} {
			want := `queue name "` + q + `" contains "` + q[1:2] + `"`

			_, err := runtime.NewPendingDispatch(job(1, runtime.JobOptions{})).OnQueue(q).Dispatch(b.ctx)
			require.ErrorIs(t, err, runtime.ErrInvalid, "OnQueue")
			require.ErrorContains(t, err, want, "OnQueue")
			_, err = runtime.Dispatch(b.ctx, job(1, runtime.JobOptions{Queue: q}))
			require.ErrorContains(t, err, want, "JobOptions.Queue")
			_, err = runtime.Chain(job(1, runtime.JobOptions{}), job(2, runtime.JobOptions{})).OnQueue(q).Dispatch(b.ctx)
			require.ErrorContains(t, err, want, "Chain.OnQueue")
			require.ErrorContains(t, b.engine.Later(b.ctx, env(q, "x", "1"), time.Minute), want, "Later")

			_, err = runtime.NewWorker(b.engine, b.router, runtime.WorkerConfig{Queues: []string{"default", q}})
			require.ErrorIs(t, err, runtime.ErrInvalid)
			require.ErrorContains(t, err, "invalid input: WorkerConfig.Queues: "+want, "WorkerConfig.Queues")
			_, err = runtime.Open(b.ctx, "embedded://"+t.Name(), runtime.EngineConfig{Partitions: map[string]int{q: 2}})
			require.ErrorContains(t, err, "EngineConfig.Partitions")
			require.ErrorContains(t, err, want, "EngineConfig.Partitions")

			_, err = runtime.NewInspector(b.engine).Sizes(b.ctx, q)
			require.ErrorContains(t, err, want, "Sizes")
			_, err = runtime.NewInspector(b.engine).Failed().Count(b.ctx, q)
			require.ErrorContains(t, err, want, "Failed().Count")
		}
		sz := sizes(t, b.bundle, "default")
		require.Equal(t, runtime.Sizes{}, sz, "nothing was pushed")

		// The names partition.Names makes reach one partition.
		for _, p := range []string{"emails#2", "emails#2.17"} {
			_, err := runtime.NewInspector(b.engine).Sizes(b.ctx, p)
			require.NoError(t, err, p)
			require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, p), p)
			_, err = runtime.NewBroker(b.engine).Reserve(b.ctx, p, 1, time.Minute)
			require.NoError(t, err, p)
		}
		for _, p := range []string{"emails#", "emails#x", "emails#2.", "emails#2.x", "emails#1#2", "a{b}#1"} {
			_, err := runtime.NewInspector(b.engine).Sizes(b.ctx, p)
			require.ErrorIs(t, err, runtime.ErrInvalid, p)
			require.ErrorContains(t, err, `queue name "`+p+`" contains`, p)
		}
	})
}
