package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// dbJob is a debounced job, keyed by its Key field, as `debounce=`
// with `debounce_key=Key` generates it.
type dbJob struct {
	Key  string
	N    int
	opts runtime.JobOptions
}

func (dbJob) JobName() string                  { return "test.Debounced" }
func (j dbJob) JobOptions() runtime.JobOptions { return j.opts }
func (j dbJob) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }
func (j dbJob) DebounceKey() string            { return runtime.DebounceKeyOf(j.Key) }

// debounced is a dbJob debounced for window, with a max wait of a
// minute, so that a slow machine's dispatches stay in one burst.
func debounced(key string, n int, window time.Duration) dbJob {
	return dbJob{Key: key, N: n, opts: runtime.JobOptions{Debounce: window, DebounceMaxWait: time.Minute}}
}

// runs records the runs of dbJobs.
type runs struct {
	mu  sync.Mutex
	got []string // "key N attempt"
	ids map[string][]string
}

func (r *runs) handler(block map[string]chan struct{}) func(ctx context.Context, j dbJob) error {
	return func(ctx context.Context, j dbJob) error {
		info, _ := runtime.JobInfoFrom(ctx)
		r.mu.Lock()
		r.got = append(r.got, fmt.Sprint(j.Key, " ", j.N, " ", info.Attempt))
		if r.ids == nil {
			r.ids = map[string][]string{}
		}
		r.ids[j.Key] = append(r.ids[j.Key], info.ID)
		r.mu.Unlock()
		if ch := block[j.Key]; ch != nil {
			<-ch
		}
		return nil
	}
}

func (r *runs) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.got))
}

func (r *runs) idsOf(key string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ids[key])
}

// queueKeys lists the keys under b's prefix, but for the short-lived
// records of push calls, the doorbell (a ring may wait in it, or not),
// a stopped worker's wake list (it expires a second after the stop) and
// the worker's metrics.
func queueKeys(t *testing.T, b bundle) []string {
	t.Helper()
	var out []string
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, b.prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			k := iter.Val()
			if !strings.HasPrefix(k, b.prefix+":calls:") && !strings.HasPrefix(k, b.prefix+":metrics:") && !strings.HasSuffix(k, ":notify") && !strings.Contains(k, ":wake:") {
				out = append(out, k)
			}
		}
		return iter.Err()
	}
	if cc, ok := b.rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		require.NoError(t, cc.ForEachMaster(b.ctx, func(ctx context.Context, c *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return scan(ctx, c)
		}))
	} else {
		require.NoError(t, scan(b.ctx, b.rdb))
	}
	slices.Sort(out)
	return out
}

// TestDebounce: of 100 dispatches of one key within the window, one job
// runs, once, with the last payload; a second key's burst is its own; a
// dispatch after the burst's job has run, or while it runs, starts a new
// burst; and no record of a burst is left once its job has run.
func TestDebounce(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		// Long enough that no stall of a loaded machine between two of
		// the 100 dispatches ends the burst early.
		const window = 2 * time.Second
		var r runs
		block := map[string]chan struct{}{"c": make(chan struct{})}
		runtime.Register(b.router, "test.Debounced", r.handler(block))
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return nil })

		// The keys a plain delayed job leaves once it has run.
		b.dispatch(t, job(1, runtime.JobOptions{Delay: time.Millisecond}))
		_, stop := b.start(t, runtime.WorkerConfig{})
		require.Eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, 10*time.Second, 5*time.Millisecond)
		stop()
		baseline := queueKeys(t, b.bundle)

		var idsA, idsB []string
		for i := range 100 {
			ids := b.dispatch(t, debounced("a", i, window), debounced("b", 1000+i, window))
			idsA, idsB = append(idsA, ids[0]), append(idsB, ids[1])
		}
		require.Len(t, slices.Compact(idsA), 1, "every dispatch of a burst returns the burst's job")
		require.Len(t, slices.Compact(idsB), 1)
		require.NotEqual(t, idsA[0], idsB[0], "two keys, two bursts")
		s := sizes(t, b.bundle, "default")
		require.Equal(t, int64(2), s.Delayed, "one job a burst, waiting")

		_, stop = b.start(t, runtime.WorkerConfig{Concurrency: 4})
		defer stop()
		require.Eventually(t, func() bool { return len(r.list()) == 2 }, 10*time.Second, 5*time.Millisecond)
		require.Eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, 10*time.Second, 5*time.Millisecond)
		require.Equal(t, []string{"a 99 1", "b 1099 1"}, r.list(), "each burst ran once, with its last payload")
		require.Equal(t, []string{idsA[0]}, r.idsOf("a"))

		// After the run: a new burst, with a new job.
		again := b.dispatch(t, debounced("a", 200, window))[0]
		require.NotEqual(t, idsA[0], again)
		require.Eventually(t, func() bool { return len(r.list()) == 3 }, 10*time.Second, 5*time.Millisecond)
		require.Contains(t, r.list(), "a 200 1")

		// While the burst's job runs: a new burst too.
		first := b.dispatch(t, debounced("c", 1, window))[0]
		require.Eventually(t, func() bool { return len(r.list()) == 4 }, 10*time.Second, 5*time.Millisecond, "c's first job started")
		second := b.dispatch(t, debounced("c", 2, window))[0]
		require.NotEqual(t, first, second, "a dispatch after the job started starts a new burst")
		close(block["c"])
		require.Eventually(t, func() bool { return len(r.list()) == 5 }, 10*time.Second, 5*time.Millisecond)
		require.Contains(t, r.list(), "c 1 1")
		require.Contains(t, r.list(), "c 2 1")
		require.Eventually(t, func() bool { return sizes(t, b.bundle, "default").Total() == 0 }, 10*time.Second, 5*time.Millisecond)
		stop()
		require.Len(t, b.failed(t, "default"), 0)
		// A burst's record expires at its job's due time: on Redis it is
		// gone once the job has run; the embedded server moves its clock
		// on every 20 ms.
		require.Eventually(t, func() bool { return slices.Equal(baseline, queueKeys(t, b.bundle)) }, time.Second, 5*time.Millisecond,
			"no record of a burst is left: %v, was %v", queueKeys(t, b.bundle), baseline)
	})
}

// TestDebounceDueTime: each dispatch of a burst moves its job's due
// time, up to the max wait from its first dispatch.
func TestDebounceDueTime(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		ctx := runtime.WithDispatcher(b.ctx, b.engine)
		delayed := b.prefix + ":{default}:delayed"
		due := func(id string) float64 {
			t.Helper()
			s, err := b.rdb.ZScore(ctx, delayed, id).Result()
			require.NoError(t, err)
			return s
		}
		dispatch := func(j runtime.Job) string {
			t.Helper()
			id, err := runtime.Dispatch(ctx, j)
			require.NoError(t, err)
			return id
		}
		// Extended: a later dispatch moves the due time on.
		j := dbJob{Key: "x", opts: runtime.JobOptions{Debounce: time.Minute, DebounceMaxWait: time.Hour}}
		id := dispatch(j)
		d1 := due(id)
		for { // until the Redis clock has passed the first due time's ms
			now, err := b.rdb.Time(ctx).Result()
			require.NoError(t, err)
			if now.Add(time.Minute).UnixMilli() > int64(d1) {
				break
			}
		}
		j.N = 1
		require.Equal(t, id, dispatch(j))
		require.Greater(t, due(id), d1, "the window starts again")

		// Capped: with a max wait of one window, the due time stays.
		k := dbJob{Key: "y", opts: runtime.JobOptions{Debounce: time.Minute, DebounceMaxWait: time.Minute}}
		id = dispatch(k)
		d1 = due(id)
		k.N = 1
		require.Equal(t, id, dispatch(k))
		require.Equal(t, d1, due(id), "the max wait caps the due time")

		// The record expires at the due time.
		ttl, err := b.rdb.PTTL(ctx, b.prefix+":{default}:debounce:test.Debounced:y").Result()
		require.NoError(t, err)
		require.InDelta(t, time.Minute.Milliseconds(), ttl.Milliseconds(), 5000)

		// The job removed: the next dispatch starts a new burst.
		require.NoError(t, b.rdb.ZRem(ctx, delayed, id).Err())
		require.NotEqual(t, id, dispatch(k))
	})
}

// TestDebouncePartitioned: on a partitioned queue every dispatch of a
// key, from any engine, reaches the partition the key picks.
func TestDebouncePartitioned(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			cfg := runtime.EngineConfig{Partitions: map[string]int{"default": 4}}
			b := setup(t, be, cfg)
			cfg.Prefix = b.prefix
			other := b.engine // an embedded server is its engine's own
			if be.Name != "embedded" {
				e, err := runtime.Open(b.ctx, be.URL, cfg)
				require.NoError(t, err)
				defer e.Close()
				other = e
			}
			keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
			want := map[string]string{}
			for round := range 3 {
				for _, k := range keys {
					e := b.engine
					if round%2 == 1 {
						e = other
					}
					id, err := e.Dispatch(b.ctx, runtime.NewPendingDispatch(testJob{N: round}).Debounce(k, time.Minute))
					require.NoError(t, err)
					if round == 0 {
						want[k] = id
					}
					require.Equal(t, want[k], id, "key %s, round %d", k, round)
				}
			}
			s := sizes(t, b, "default")
			require.Equal(t, int64(len(keys)), s.Delayed, "one job a key over all partitions")
		})
	}
}

// TestDebounceConflicts: a debounced job that a path cannot debounce,
// or whose options contradict it, is refused with an error that names
// the conflict, and nothing is pushed.
func TestDebounceConflicts(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		ctx := runtime.WithDispatcher(b.ctx, b.engine)
		d := runtime.JobOptions{Debounce: time.Second}
		cases := []struct {
			name, want string
			run        func() error
		}{
			{"no key", "no debounce key", func() error {
				_, err := runtime.Dispatch(ctx, testJob{opts: d})
				return err
			}},
			{"unique", "also unique", func() error {
				_, err := runtime.Dispatch(ctx, dbJob{Key: "k", opts: runtime.JobOptions{Debounce: time.Second, UniqueFor: time.Minute}})
				return err
			}},
			{"delay", "also has a delay", func() error {
				_, err := runtime.NewPendingDispatch(dbJob{Key: "k", opts: d}).Delay(time.Second).Dispatch(ctx)
				return err
			}},
			{"max wait", "DebounceMaxWait (1ms) must be at least the window (1s)", func() error {
				_, err := runtime.NewPendingDispatch(dbJob{Key: "k", opts: d}).DebounceMaxWait(time.Millisecond).Dispatch(ctx)
				return err
			}},
			{"batch", "only Dispatch and DispatchMany debounce", func() error {
				_, err := runtime.NewBatch(dbJob{Key: "k", opts: d}).Dispatch(ctx)
				return err
			}},
		}
		for _, c := range cases {
			err := c.run()
			require.ErrorIs(t, err, runtime.ErrInvalid, c.name)
			require.ErrorContains(t, err, c.want, c.name)
		}
		require.Equal(t, int64(0), sizes(t, b, "default").Total(), "nothing was pushed")

		// DispatchMany sends each debounced job on its own, to its burst.
		ids, err := runtime.DispatchMany(ctx, []dbJob{{Key: "k", N: 1, opts: d}, {Key: "k", N: 2, opts: d}, {Key: "l", opts: d}})
		require.NoError(t, err)
		require.Equal(t, ids[0], ids[1])
		require.NotEqual(t, ids[0], ids[2])
		require.Equal(t, int64(2), sizes(t, b, "default").Delayed)
	})
}
