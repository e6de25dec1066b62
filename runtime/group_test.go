package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// keys returns the keys of queue under b's prefix.
func (b bundle) keys(queue string) keyspace.QueueKeys { return keyspace.New(b.prefix).Build(queue) }

// groupJob is a testJob in the group its Tag names.
type groupJob struct{ testJob }

func (j groupJob) JobGroup() string { return j.Tag }

// grouped returns an envelope for queue in group g with limit (0: none).
func grouped(queue, g string, limit int, body string) *runtime.Envelope {
	e := env(queue, "app.Job", body)
	e.Headers = map[string]string{runtime.GroupHeader: g}
	if limit > 0 {
		e.Headers[runtime.GroupLimitHeader] = strconv.Itoa(limit)
	}
	return e
}

func pushAll(t *testing.T, b bundle, envs ...*runtime.Envelope) {
	t.Helper()
	jobs := make([]runtime.Outgoing, len(envs))
	for i, e := range envs {
		jobs[i] = runtime.Outgoing{Envelope: e}
	}
	require.NoError(t, b.engine.PushMany(b.ctx, jobs))
}

// bodies reserves up to n jobs of queue and returns their bodies, in the
// order they were handed out, and the reservations.
func bodies(t *testing.T, b bundle, queue string, n int) ([]string, []runtime.Reservation) {
	t.Helper()
	return bodiesLeased(t, b, queue, n, time.Minute)
}

// bodiesLeased is bodies with a lease of its own.
func bodiesLeased(t *testing.T, b bundle, queue string, n int, lease time.Duration) ([]string, []runtime.Reservation) {
	t.Helper()
	res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, queue, n, lease)
	require.NoError(t, err)
	var out []string
	for _, r := range res.Jobs {
		env, err := runtime.DecodeEnvelope(queue, r.ID, r.Payload)
		require.NoError(t, err)
		out = append(out, string(env.Body))
	}
	return out, res.Jobs
}

// A tenant with 50,000 waiting jobs holds up no other: the 10 jobs
// another tenant dispatches after them all start among the next 100
// handed out, and each tenant's jobs start in the order dispatched.
func TestGroupsTakeTurns(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const many = 50_000
		var a []*runtime.Envelope
		for i := range many {
			a = append(a, grouped("fair", "A", 0, fmt.Sprintf("A%d", i)))
		}
		pushAll(t, b, a...)
		// Some jobs of no group come last; in a queue with groups they
		// take their turn as a group of their own.
		pushAll(t, b, env("fair", "app.Job", "plain0"), env("fair", "app.Job", "plain1"))
		for i := range 10 {
			pushAll(t, b, grouped("fair", "B", 0, fmt.Sprintf("B%d", i)))
		}
		require.Equal(t, int64(many+12), sizes(t, b, "fair").Ready, "grouped jobs count as ready")

		// (leases that outlast the reserves: on embedded under -race, each
		// takes about 2 s with 50,000 jobs waiting, and a job whose lease
		// ran out would be handed out again)
		var got []string
		for len(got) < 100 {
			bs, _ := bodiesLeased(t, b, "fair", 7, 10*time.Minute)
			require.NotEmpty(t, bs)
			got = append(got, bs...)
		}
		var seenB, seenPlain int
		nextA := 0
		for _, s := range got {
			switch s[0] {
			case 'B':
				require.Equal(t, fmt.Sprintf("B%d", seenB), s, "B's jobs in order")
				seenB++
			case 'p':
				require.Equal(t, fmt.Sprintf("plain%d", seenPlain), s)
				seenPlain++
			default:
				require.Equal(t, fmt.Sprintf("A%d", nextA), s, "A's jobs in order")
				nextA++
			}
		}
		require.Equal(t, 10, seenB, "all of B's jobs start among the first 100: %v", got)
		require.Equal(t, 2, seenPlain)
	})
}

// A group with a limit runs at most that many jobs at once; the others
// wait, parked: no attempt counted, not handed out, the group off the
// ring, until a job of the group ends (ack, release, fail, a lease that
// runs out).
func TestGroupLimitParksAndFrees(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		broker := runtime.NewBroker(b.engine)
		var envs []*runtime.Envelope
		for i := range 6 {
			envs = append(envs, grouped("lim", "K", 2, fmt.Sprintf("K%d", i)))
		}
		envs = append(envs, grouped("lim", "L", 0, "L0"))
		pushAll(t, b, envs...)

		got, jobs := bodies(t, b, "lim", 10)
		require.Equal(t, []string{"K0", "L0", "K1"}, got, "two of K, then K is at its limit")
		none, _ := bodies(t, b, "lim", 10)
		require.Empty(t, none, "K's other jobs are parked")

		qk := b.keys("lim")
		ring, err := b.rdb.LRange(b.ctx, qk.GroupRing, 0, -1).Result()
		require.NoError(t, err)
		require.Empty(t, ring, "a group at its limit is off the ring")
		waiting, err := b.rdb.ZCard(b.ctx, qk.GroupWait).Result()
		require.NoError(t, err)
		require.Equal(t, int64(4), waiting, "parked in the group's wait set")
		states, err := b.rdb.HLen(b.ctx, qk.State).Result()
		require.NoError(t, err)
		require.Equal(t, int64(3), states, "only the jobs handed out have counted an attempt")
		groups, err := runtime.NewInspector(b.engine).Groups(b.ctx, "lim", 10)
		require.NoError(t, err)
		require.Equal(t, runtime.QueueGroups{Waiting: 4, Groups: []runtime.GroupInfo{{Name: "K", Waiting: 4, Running: 2, Parked: true}}}, groups)

		// An ack frees a slot: the next job of K goes.
		require.NoError(t, broker.Ack(b.ctx, jobs[0].Ref))
		got, k2 := bodies(t, b, "lim", 10)
		require.Equal(t, []string{"K2"}, got)
		require.Equal(t, 1, k2[0].Attempts)

		// A release frees one; the released job goes back into its group,
		// behind those waiting.
		require.NoError(t, broker.Release(b.ctx, runtime.ReleaseOpts{}, jobs[2].Ref))
		got, k3 := bodies(t, b, "lim", 10)
		require.Equal(t, []string{"K3"}, got)

		// A fail frees one.
		require.NoError(t, broker.Fail(b.ctx, runtime.Failure{Ref: k2[0].Ref, Name: "app.Job", Err: errors.New("boom"), Attempts: 1}))
		got, k4 := bodies(t, b, "lim", 10)
		require.Equal(t, []string{"K4"}, got)

		// A lease that runs out frees one.
		res, err := broker.Reserve(b.ctx, "lim", 1, time.Minute)
		require.NoError(t, err)
		require.Empty(t, res.Jobs)
		require.NoError(t, broker.Ack(b.ctx, k3[0].Ref))
		short, err := broker.Reserve(b.ctx, "lim", 5, 30*time.Millisecond)
		require.NoError(t, err)
		require.Len(t, short.Jobs, 1)
		time.Sleep(60 * time.Millisecond) // the lease runs out
		got, back := bodies(t, b, "lim", 5)
		require.Equal(t, []string{"K1"}, got, "the slot of the lease that ran out is free; the released K1 is next")
		require.NoError(t, broker.Ack(b.ctx, k4[0].Ref, back[0].Ref))

		// What is left: K5, whose lease ran out, back in its group.
		rest, restJobs := bodies(t, b, "lim", 5)
		require.Equal(t, []string{"K5"}, rest)
		require.Equal(t, 2, restJobs[0].Attempts)
		require.NoError(t, broker.Ack(b.ctx, restJobs[0].Ref, jobs[1].Ref))
		final, _ := bodies(t, b, "lim", 5)
		require.Empty(t, final)

		// The failed job keeps its group: retried, it is K's again.
		failed, err := runtime.NewInspector(b.engine).Failed().Retry(b.ctx, "lim", k2[0].ID)
		require.NoError(t, err)
		require.Len(t, failed, 1)
		got, again := bodies(t, b, "lim", 5)
		require.Equal(t, []string{"K2"}, got)
		env, err := runtime.DecodeEnvelope("lim", again[0].ID, again[0].Payload)
		require.NoError(t, err)
		require.Equal(t, "K", env.Group())
		require.Equal(t, 2, env.GroupLimit())
		running, err := b.rdb.ZCard(b.ctx, qk.GroupRunning).Result()
		require.NoError(t, err)
		require.Equal(t, int64(1), running, "the retried job holds K's slot")
		require.NoError(t, broker.Ack(b.ctx, again[0].Ref))
		left, err := b.rdb.Exists(b.ctx, qk.GroupOf, qk.GroupWait, qk.GroupRing, qk.GroupActive, qk.GroupRunning).Result()
		require.NoError(t, err)
		require.Zero(t, left, "nothing of the groups is left")
	})
}

// 50 keys with a limit of 2 each, run by two workers on two engines:
// never more than 2 jobs of one key run at once, by the handlers' own
// start and end times, and waiting for a slot uses no attempt.
func TestGroupLimitAcrossWorkers(t *testing.T) {
	t.Parallel()
	forEachBusBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, be redistest.Backend) {
		const keys, per, limit = 50, 8, 2
		type span struct {
			key        string
			start, end time.Time
			attempt    int
		}
		var mu sync.Mutex
		var spans []span
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			info, _ := runtime.JobInfoFrom(ctx)
			s := span{key: j.Tag, start: time.Now(), attempt: info.Attempt}
			time.Sleep(5 * time.Millisecond) // long enough for jobs of one key to meet
			s.end = time.Now()
			mu.Lock()
			spans = append(spans, s)
			mu.Unlock()
			return nil
		})
		for i := range keys * per {
			_, err := runtime.Dispatch(b.ctx, groupJob{tagged(i, fmt.Sprint("customer-", i/per), runtime.JobOptions{Queue: "perkey", GroupLimit: limit})})
			require.NoError(t, err)
		}
		other := b.open(t, be, runtime.EngineConfig{})
		ctx, cancel := context.WithCancel(b.ctx)
		done := make(chan error, 2)
		for _, e := range []*runtime.Engine{b.engine, other} {
			w, err := runtime.NewWorker(e, b.router, runtime.WorkerConfig{Queues: []string{"perkey"}, Logger: quiet, Concurrency: 40, Prefetch: 4, Sleep: 10 * time.Millisecond})
			require.NoError(t, err)
			go func() { done <- w.Run(ctx) }()
		}
		eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(spans) == keys*per
		}, "every job runs")
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, <-done)

		byKey := map[string][]span{}
		for _, s := range spans {
			require.Equal(t, 1, s.attempt, "waiting for a slot used no attempt")
			byKey[s.key] = append(byKey[s.key], s)
		}
		require.Len(t, byKey, keys)
		for k, ss := range byKey {
			// At each start, count the key's jobs running then.
			for _, s := range ss {
				running := 0
				for _, o := range ss {
					if !o.start.After(s.start) && o.end.After(s.start) {
						running++
					}
				}
				require.LessOrEqual(t, running, limit, "jobs of %s running at %v", k, s.start)
			}
		}
		left, err := b.rdb.Exists(b.ctx, b.keys("perkey").GroupOf, b.keys("perkey").GroupRunning, b.keys("perkey").GroupWait).Result()
		require.NoError(t, err)
		require.Zero(t, left, "no slot or group entry is left behind")
	})
}

// A dispatch sets or overrides the group and its limit; a group with a
// NUL byte is refused with an error that names it, and nothing is pushed.
func TestGroupPerDispatch(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		_, err := b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(onQueue(1, "per")).OnGroup("acme").WithGroupLimit(1))
		require.NoError(t, err)
		_, err = b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(groupJob{tagged(2, "from-field", runtime.JobOptions{Queue: "per"})}).OnGroup("acme"))
		require.NoError(t, err)
		_, err = b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(groupJob{tagged(3, "from-field", runtime.JobOptions{Queue: "per"})}))
		require.NoError(t, err)
		_, err = b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(onQueue(4, "per")).OnGroup("a\x00b"))
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, `group "a\x00b" holds a NUL byte`)

		res := mustReserve(t, b, "per", 10)
		var groups []string
		for _, r := range res.Jobs {
			env, err := runtime.DecodeEnvelope("per", r.ID, r.Payload)
			require.NoError(t, err)
			groups = append(groups, fmt.Sprintf("%s/%d", env.Group(), env.GroupLimit()))
		}
		// acme's limit of 1 holds its second job back.
		require.Equal(t, []string{"acme/1", "from-field/0"}, groups)
	})
}
