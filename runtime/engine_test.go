package runtime_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestPushReserveAck(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var ids []string
		for i := range 3 {
			e := env("default", "app.Job", fmt.Sprint(i))
			require.NoError(t, b.engine.Push(b.ctx, e))
			require.Len(t, e.ID, 26)
			ids = append(ids, e.ID)
		}
		require.Equal(t, runtime.Sizes{Ready: 3}, sizes(t, b, "default"))

		batch := mustReserve(t, b, "default", 2)
		require.Len(t, batch.Jobs, 2)
		for i, j := range batch.Jobs {
			require.Equal(t, ids[i], j.ID, "jobs come out in push order")
			require.Equal(t, 1, j.Attempts)
			require.Equal(t, 0, j.Exceptions)
			require.NotEmpty(t, j.Token)
			require.WithinDuration(t, batch.Now.Add(time.Minute), j.LeaseUntil, time.Millisecond)
			got, err := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(i), string(got.Body))
			require.Equal(t, "app.Job", got.Name)
			require.Equal(t, "default", got.Queue)
		}
		require.Equal(t, runtime.Sizes{Ready: 1, Reserved: 2}, sizes(t, b, "default"))

		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, batch.Jobs[0].Ref, batch.Jobs[1].Ref))
		require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b, "default"))

		last := mustReserve(t, b, "default", 10)
		require.Len(t, last.Jobs, 1)
		require.Equal(t, ids[2], last.Jobs[0].ID)
		require.NotEqual(t, batch.Jobs[0].Token, last.Jobs[0].Token, "each reserve has its own token")
		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, last.Jobs[0].Ref))
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "default"))

		// Nothing of the jobs is left behind; only the doorbell may remain,
		// and the records of the calls until they expire.
		keys := jobKeys(t, b, "default", time.Minute)
		require.Subset(t, []string{b.prefix + ":{default}:notify"}, keys)
	})
}

// TestReserveRingsForWhatItLeaves checks the doorbell a reserve leaves:
// rung when jobs remain for another worker, not when it took the last.
func TestReserveRingsForWhatItLeaves(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		bell := b.prefix + ":{default}:notify"
		for i := range 4 {
			require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", fmt.Sprint(i))))
		}
		take := func() int64 { // what a waiting worker's BLPOP would take
			n, err := b.rdb.Del(b.ctx, bell).Result()
			require.NoError(t, err)
			return n
		}
		require.Equal(t, int64(1), take(), "the pushes rang")

		require.Len(t, mustReserve(t, b, "default", 2).Jobs, 2)
		require.Equal(t, int64(1), take(), "2 jobs remain: rung again")

		require.Len(t, mustReserve(t, b, "default", 2).Jobs, 2)
		require.Equal(t, int64(0), take(), "it took the last jobs, asking for just as many")

		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "4")))
		take()
		require.Len(t, mustReserve(t, b, "default", 5).Jobs, 1)
		require.Equal(t, int64(0), take(), "it took the last job, asking for more")
	})
}

func TestReserveBatches(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		out := make([]runtime.Outgoing, 2500)
		for i := range out {
			out[i] = runtime.Outgoing{Envelope: env("bulk", "app.Job", fmt.Sprint(i))}
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
		require.Equal(t, int64(2500), sizes(t, b, "bulk").Ready)

		seen := map[string]bool{}
		var counts []int
		for {
			batch := mustReserve(t, b, "bulk", 1100)
			if len(batch.Jobs) == 0 {
				break
			}
			counts = append(counts, len(batch.Jobs))
			for _, j := range batch.Jobs {
				require.False(t, seen[j.ID], "job %s reserved twice", j.ID)
				seen[j.ID] = true
			}
		}
		require.Equal(t, []int{1100, 1100, 300}, counts)
		require.Equal(t, runtime.Sizes{Reserved: 2500}, sizes(t, b, "bulk"))
	})
}

func TestPushManyAcrossQueuesAndDelays(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var out []runtime.Outgoing
		for i := range 1200 {
			q := []string{"a", "b"}[i%2]
			var d time.Duration
			if i%3 == 0 {
				d = time.Hour
			}
			out = append(out, runtime.Outgoing{Envelope: env(q, "app.Job", ""), Delay: d})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
		require.Equal(t, runtime.Sizes{Ready: 400, Delayed: 200}, sizes(t, b, "a"))
		require.Equal(t, runtime.Sizes{Ready: 400, Delayed: 200}, sizes(t, b, "b"))
		qs, err := runtime.NewInspector(b.engine).Queues(b.ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b"}, qs)
	})
}

func TestDuplicateIDIsRefused(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		first := env("default", "app.Job", "first")
		require.NoError(t, b.engine.Push(b.ctx, first))
		again := env("default", "app.Job", "second")
		again.ID = first.ID
		err := b.engine.Push(b.ctx, again)
		require.ErrorIs(t, err, runtime.ErrIDTaken)
		require.ErrorContains(t, err, first.ID)
		err = b.engine.Later(b.ctx, again, time.Second)
		require.ErrorIs(t, err, runtime.ErrIDTaken)

		// The same job again is a push retried by the client: it is
		// skipped, not queued twice and not refused.
		require.NoError(t, b.engine.Push(b.ctx, first))
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: first}, {Envelope: env("default", "app.Job", "third")}}))
		require.Equal(t, int64(2), sizes(t, b, "default").Ready)

		batch := mustReserve(t, b, "default", 10)
		require.Len(t, batch.Jobs, 2)
		got, err := runtime.DecodeEnvelope(batch.Jobs[0].Queue, batch.Jobs[0].ID, batch.Jobs[0].Payload)
		require.NoError(t, err)
		require.Equal(t, "first", string(got.Body))
	})
}

// TestDuplicateIDWithinOnePush: a job ID that one push names twice follows
// the rules of an ID pushed already: the same job again is pushed once, a
// different one is refused and nothing of the push is added.
func TestDuplicateIDWithinOnePush(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		for _, delay := range []time.Duration{0, time.Hour} {
			queued := func(q string) int64 {
				s := sizes(t, b, q)
				if delay > 0 {
					require.Zero(t, s.Ready)
					return s.Delayed
				}
				require.Zero(t, s.Delayed)
				return s.Ready
			}

			q := fmt.Sprint("same", delay)
			twin := env(q, "app.Job", "twin")
			twin.ID = "twin"
			require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{
				{Envelope: twin, Delay: delay}, {Envelope: env(q, "app.Job", "other"), Delay: delay}, {Envelope: twin, Delay: delay},
			}))
			require.Equal(t, int64(2), queued(q), "delay %v: the twin is queued once", delay)
			if delay == 0 {
				ids := readyIDs(t, b, q)
				require.Len(t, ids, 2)
				require.Equal(t, 1, countOf(ids, "twin"))
			}

			q = fmt.Sprint("clash", delay)
			first := env(q, "app.Job", "first")
			first.ID = "taken"
			rival := env(q, "app.Job", "rival")
			rival.ID = "taken"
			err := b.engine.PushMany(b.ctx, []runtime.Outgoing{
				{Envelope: first, Delay: delay}, {Envelope: env(q, "app.Job", "other"), Delay: delay}, {Envelope: rival, Delay: delay},
			})
			require.ErrorIs(t, err, runtime.ErrIDTaken, "delay %v", delay)
			require.ErrorContains(t, err, "taken")
			require.Zero(t, queued(q), "delay %v: nothing is queued", delay)
			require.Zero(t, b.rdb.Exists(b.ctx, b.prefix+":{"+q+"}:payloads").Val(), "delay %v: nothing is stored", delay)
		}
	})
}

// TestLaterNeverEarly: a delay with a fraction of a millisecond, pushed at
// any point of Redis's millisecond, never makes the job ready before the
// delay has passed since the push began.
func TestLaterNeverEarly(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		for i := range 20 {
			delay := 3*time.Millisecond + time.Duration(i)*97*time.Microsecond
			start := time.Now()
			require.NoError(t, b.engine.Later(b.ctx, env("default", "app.Job", ""), delay))
			for len(mustReserve(t, b, "default", 1).Jobs) == 0 {
			}
			require.GreaterOrEqual(t, time.Since(start), delay, "ready %v after a push delayed %v", time.Since(start), delay)
		}
	})
}

func TestLaterBecomesReadyWhenDue(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const delay = 300 * time.Millisecond
		e := env("default", "app.Job", "")
		require.NoError(t, b.engine.Later(b.ctx, e, delay))
		require.Equal(t, runtime.Sizes{Delayed: 1}, sizes(t, b, "default"))

		batch := mustReserve(t, b, "default", 1)
		require.Empty(t, batch.Jobs, "not before it is due")
		require.False(t, batch.NextDue.IsZero())
		due := batch.NextDue
		require.InDelta(t, float64(delay), float64(due.Sub(batch.Now)), float64(50*time.Millisecond))

		// Wait as a worker would, on the doorbell, until the due time.
		for {
			batch = mustReserve(t, b, "default", 1)
			if len(batch.Jobs) > 0 {
				break
			}
			_, err := runtime.NewBroker(b.engine).Wait(b.ctx, []string{"default"}, batch.NextDue.Sub(batch.Now))
			require.NoError(t, err)
		}
		require.Equal(t, e.ID, batch.Jobs[0].ID)
		require.False(t, batch.Now.Before(due), "reserved at %v, before due %v", batch.Now, due)
	})
}

func TestMigrateReadsTheClockToTheMicrosecond(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		// A clock read to the ms has no µs; five reads in a row all on a
		// whole ms are a chance of one in 10^15.
		subMs := 0
		for range 5 {
			before := time.Now()
			m, err := runtime.NewBroker(b.engine).Migrate(b.ctx, "default")
			require.NoError(t, err)
			require.WithinDuration(t, before, m.Now, time.Second)
			if m.Now.Nanosecond()%int(time.Millisecond) != 0 {
				subMs++
			}
		}
		require.NotZero(t, subMs, "every Migration.Now fell on a whole ms")
	})
}

func TestLeaseExpiryAndFencing(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "")))
		first, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "default", 1, 100*time.Millisecond)
		require.NoError(t, err)
		require.Len(t, first.Jobs, 1)
		stale := first.Jobs[0].Ref

		time.Sleep(150 * time.Millisecond)
		m, err := runtime.NewBroker(b.engine).Migrate(b.ctx, "default")
		require.NoError(t, err)
		require.Equal(t, 1, m.Expired)

		// The first worker's lease is gone even before anyone reserves again.
		lost, err := runtime.NewBroker(b.engine).Extend(b.ctx, time.Minute, stale)
		require.NoError(t, err)
		require.Equal(t, []runtime.Ref{stale}, lost)

		second := mustReserve(t, b, "default", 1)
		require.Len(t, second.Jobs, 1)
		require.Equal(t, stale.ID, second.Jobs[0].ID)
		require.Equal(t, 2, second.Jobs[0].Attempts)
		require.NotEqual(t, stale.Token, second.Jobs[0].Token)

		// Every call with the stale token is refused and changes nothing.
		var lle *runtime.LeaseLostError
		err = runtime.NewBroker(b.engine).Ack(b.ctx, stale)
		require.ErrorIs(t, err, runtime.ErrLeaseLost)
		require.ErrorAs(t, err, &lle)
		require.Equal(t, stale.ID, lle.ID)
		require.ErrorIs(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{}, stale), runtime.ErrLeaseLost)
		require.ErrorIs(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{Delay: time.Second}, stale), runtime.ErrLeaseLost)
		require.ErrorIs(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: stale, Err: errors.New("x")}), runtime.ErrLeaseLost)
		lost, err = runtime.NewBroker(b.engine).Extend(b.ctx, time.Minute, stale)
		require.NoError(t, err)
		require.Len(t, lost, 1)
		require.Equal(t, runtime.Sizes{Reserved: 1}, sizes(t, b, "default"))

		// The current holder is unaffected.
		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, second.Jobs[0].Ref))
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "default"))
	})
}

func TestUnreservedJobCannotBeSettled(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "")))
		j := mustReserve(t, b, "default", 1).Jobs[0]
		require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{}, j.Ref))
		// Released: ready again, with no current token. Neither the old
		// token nor an empty one may touch it.
		for _, tok := range []string{j.Token, ""} {
			ref := runtime.Ref{Queue: "default", ID: j.ID, Token: tok}
			require.ErrorIs(t, runtime.NewBroker(b.engine).Ack(b.ctx, ref), runtime.ErrLeaseLost)
			require.ErrorIs(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{}, ref), runtime.ErrLeaseLost)
			require.ErrorIs(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: ref, Err: errors.New("x")}), runtime.ErrLeaseLost)
			lost, err := runtime.NewBroker(b.engine).Extend(b.ctx, time.Minute, ref)
			require.NoError(t, err)
			require.Len(t, lost, 1)
		}
		require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b, "default"))
		require.Equal(t, 2, mustReserve(t, b, "default", 1).Jobs[0].Attempts)
	})
}

func TestExtendKeepsTheLease(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "")))
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "default", 1, 150*time.Millisecond)
		require.NoError(t, err)
		ref := batch.Jobs[0].Ref
		for range 4 {
			time.Sleep(80 * time.Millisecond)
			lost, err := runtime.NewBroker(b.engine).Extend(b.ctx, 150*time.Millisecond, ref)
			require.NoError(t, err)
			require.Empty(t, lost)
		}
		// 320 ms after reserving, well past the first lease: still ours.
		m, err := runtime.NewBroker(b.engine).Migrate(b.ctx, "default")
		require.NoError(t, err)
		require.Equal(t, 0, m.Expired)
		require.False(t, m.NextExpiry.IsZero())
		require.Empty(t, mustReserve(t, b, "default", 1).Jobs)
		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, ref))
	})
}

func TestRelease(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "")))
		j := mustReserve(t, b, "default", 1).Jobs[0]

		require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{Exception: true}, j.Ref))
		require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b, "default"))
		j = mustReserve(t, b, "default", 1).Jobs[0]
		require.Equal(t, 2, j.Attempts)
		require.Equal(t, 1, j.Exceptions)

		require.NoError(t, runtime.NewBroker(b.engine).Release(b.ctx, runtime.ReleaseOpts{Delay: 200 * time.Millisecond}, j.Ref))
		require.Equal(t, runtime.Sizes{Delayed: 1}, sizes(t, b, "default"))
		batch := mustReserve(t, b, "default", 1)
		require.Empty(t, batch.Jobs)
		require.InDelta(t, float64(200*time.Millisecond), float64(batch.NextDue.Sub(batch.Now)), float64(50*time.Millisecond))
		time.Sleep(250 * time.Millisecond)
		j = mustReserve(t, b, "default", 1).Jobs[0]
		require.Equal(t, 3, j.Attempts)
		require.Equal(t, 1, j.Exceptions, "a release without an exception is not counted")
	})
}

func TestMigrateIsBounded(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{MigrateLimit: 1000}, func(t *testing.T, b bundle) {
		total := 200_000
		if b.backend == "embedded" {
			total = 20_000
		}
		out := make([]runtime.Outgoing, total)
		for i := range out {
			out[i] = runtime.Outgoing{Envelope: env("backlog", "app.Job", ""), Delay: time.Millisecond}
		}
		require.NoError(t, b.engine.PushMany(b.ctx, out))
		time.Sleep(20 * time.Millisecond)

		moved, calls := 0, 0
		for {
			m, err := runtime.NewBroker(b.engine).Migrate(b.ctx, "backlog")
			require.NoError(t, err)
			require.LessOrEqual(t, m.Delayed, 1000, "one call moves at most MigrateLimit")
			if m.Delayed == 0 {
				break
			}
			moved += m.Delayed
			calls++
		}
		require.Equal(t, total, moved)
		require.Equal(t, total/1000, calls)
		require.Equal(t, runtime.Sizes{Ready: int64(total)}, sizes(t, b, "backlog"))
	})
}

func TestPausedQueueYieldsNothing(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "")))
		require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, "default"))
		p, err := runtime.NewInspector(b.engine).QueuePaused(b.ctx, "default")
		require.NoError(t, err)
		require.True(t, p)
		require.Empty(t, mustReserve(t, b, "default", 1).Jobs)
		require.NoError(t, runtime.NewInspector(b.engine).ResumeQueue(b.ctx, "default"))
		require.Len(t, mustReserve(t, b, "default", 1).Jobs, 1)
	})
}

func TestSizesClearQueues(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		for range 3 {
			require.NoError(t, b.engine.Push(b.ctx, env("x", "app.Job", "")))
		}
		require.NoError(t, b.engine.Later(b.ctx, env("x", "app.Job", ""), time.Hour))
		j := mustReserve(t, b, "x", 1).Jobs[0]
		require.NoError(t, b.engine.Push(b.ctx, env("x", "app.Job", "")))
		k := mustReserve(t, b, "x", 1).Jobs[0]
		require.NoError(t, runtime.NewBroker(b.engine).Fail(b.ctx, runtime.Failure{Ref: k.Ref, Err: errors.New("boom")}))
		require.Equal(t, runtime.Sizes{Ready: 2, Delayed: 1, Reserved: 1, Failed: 1}, sizes(t, b, "x"))

		n, err := runtime.NewInspector(b.engine).ClearQueue(b.ctx, "x")
		require.NoError(t, err)
		require.Equal(t, int64(4), n)
		require.Equal(t, runtime.Sizes{Failed: 1}, sizes(t, b, "x"), "failed jobs survive a clear")
		require.ErrorIs(t, runtime.NewBroker(b.engine).Ack(b.ctx, j.Ref), runtime.ErrLeaseLost)

		qs, err := runtime.NewInspector(b.engine).Queues(b.ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"x"}, qs)
	})
}

func TestWaitWakesOnPush(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		// An empty queue: nothing wakes the waiter before the timeout.
		woke, err := runtime.NewBroker(b.engine).Wait(b.ctx, []string{"high", "low"}, 100*time.Millisecond)
		require.NoError(t, err)
		require.Empty(t, woke)

		var wg sync.WaitGroup
		wg.Add(1)
		var got string
		go func() {
			defer wg.Done()
			got, err = runtime.NewBroker(b.engine).Wait(b.ctx, []string{"high", "low"}, 5*time.Second)
		}()
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		require.NoError(t, b.engine.Push(b.ctx, env("low", "app.Job", "")))
		wg.Wait()
		require.NoError(t, err)
		require.Equal(t, "low", got)
		require.Less(t, time.Since(start), 4*time.Second, "woken by the push, not the timeout")
	})
}

func TestPayloadCap(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{MaxPayload: 1024}, func(t *testing.T, b bundle) {
		big := env("default", "app.Big", string(make([]byte, 2000)))
		err := b.engine.Push(b.ctx, big)
		require.ErrorIs(t, err, runtime.ErrPayloadTooLarge)
		var pe *runtime.PayloadTooLargeError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 1024, pe.Cap)
		require.Greater(t, pe.Size, 2000)
		require.ErrorContains(t, err, "app.Big")
		require.ErrorContains(t, err, "1024")

		// One oversize job in a bulk push: nothing is pushed.
		err = b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: env("default", "app.Small", "")}, {Envelope: big}})
		require.ErrorIs(t, err, runtime.ErrPayloadTooLarge)
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "default"))
	})
}

func TestMalformedPayloads(t *testing.T) {
	good, err := (&runtime.Envelope{ID: "ID1", Name: "app.Job", Queue: "q", Body: []byte("hello")}).Encode()
	require.NoError(t, err)
	cases := map[string][]byte{
		"empty":     {},
		"truncated": good[:len(good)/2],
		"json":      []byte(`{"job":"app.Job","data":{}}`),
		"foreign":   mustMsgpack(t, map[string]any{"job": "x", "attempts": 3}),
		"garbage":   {0xc1, 0xff, 0x00, 0x13},
	}
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		qk := b.prefix + ":{poison}:"
		for name, payload := range cases {
			id := "poison-" + name
			require.NoError(t, b.rdb.HSet(b.ctx, qk+"payloads", id, payload).Err())
			require.NoError(t, b.rdb.RPush(b.ctx, qk+"ready", id).Err())
		}
		batch := mustReserve(t, b, "poison", 100)
		require.Len(t, batch.Jobs, len(cases))
		for _, j := range batch.Jobs {
			_, err := runtime.DecodeEnvelope(j.Queue, j.ID, j.Payload)
			require.ErrorIs(t, err, runtime.ErrDecode, j.ID)
			var de *runtime.DecodeError
			require.ErrorAs(t, err, &de)
			require.Equal(t, j.ID, de.ID)
			require.ErrorContains(t, err, j.ID)
		}
	})
	_, err = runtime.DecodeEnvelope("q", "ID1", good)
	require.NoError(t, err)
	_, err = runtime.DecodeEnvelope("q", "OTHER", good)
	require.ErrorIs(t, err, runtime.ErrDecode, "an envelope under another job's ID is refused")
}

func TestOrphanIDsAreSkipped(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		require.NoError(t, b.rdb.RPush(b.ctx, b.prefix+":{default}:ready", "gone").Err())
		e := env("default", "app.Job", "")
		require.NoError(t, b.engine.Push(b.ctx, e))
		batch := mustReserve(t, b, "default", 10)
		require.Len(t, batch.Jobs, 1)
		require.Equal(t, e.ID, batch.Jobs[0].ID)
	})
}

func TestNoScriptRecovery(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		flush := func() { require.NoError(t, b.rdb.ScriptFlush(b.ctx).Err()) }

		flush() // single call
		require.NoError(t, b.engine.Push(b.ctx, env("a", "app.Job", "")))

		flush() // pipeline of two scripts of different queues
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{
			{Envelope: env("a", "app.Job", "")}, {Envelope: env("b", "app.Job", "")},
		}))

		flush() // Reserve pipelines migrate and reserve
		ja := mustReserve(t, b, "a", 10).Jobs
		require.Len(t, ja, 2)
		jb := mustReserve(t, b, "b", 10).Jobs
		require.Len(t, jb, 1)

		flush() // ack across two queues: a pipeline
		require.NoError(t, runtime.NewBroker(b.engine).Ack(b.ctx, ja[0].Ref, jb[0].Ref))
		require.Equal(t, runtime.Sizes{Reserved: 1}, sizes(t, b, "a"))
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "b"))
	})
}

func TestInvalidInput(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		err := b.engine.Push(b.ctx, env("", "app.Job", ""))
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.ErrorContains(t, err, "queue name is empty")
		require.ErrorIs(t, b.engine.Push(b.ctx, env("a{b}", "app.Job", "")), runtime.ErrInvalid)
		_, err = runtime.NewBroker(b.engine).Reserve(b.ctx, "q", 0, time.Second)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		// A delay already past is no invalid input: the job is ready at
		// once (delay_test.go).
		require.NoError(t, b.engine.Later(b.ctx, env("q", "app.Job", ""), -time.Second))
		require.Equal(t, runtime.Sizes{Ready: 1}, sizes(t, b, "q"))
	})
}

// TestDeferralGivesBackTheAttempt: a release with Deferral leaves the
// job's attempts as they were before its reserve, so its next reserve
// counts the same attempt again; a plain release keeps the count. A
// deferral cannot count an exception.
func TestDeferralGivesBackTheAttempt(t *testing.T) {
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		br := runtime.NewBroker(b.engine)
		require.NoError(t, b.engine.Push(b.ctx, env("default", "app.Job", "")))
		j := mustReserve(t, b, "default", 1).Jobs[0]
		require.Equal(t, 1, j.Attempts)
		require.ErrorIs(t, br.Release(b.ctx, runtime.ReleaseOpts{Deferral: true, Exception: true}, j.Ref), runtime.ErrInvalid)
		for range 3 {
			require.NoError(t, br.Release(b.ctx, runtime.ReleaseOpts{Deferral: true}, j.Ref))
			j = mustReserve(t, b, "default", 1).Jobs[0]
			require.Equal(t, 1, j.Attempts, "deferred: the attempt was given back")
			require.Equal(t, 0, j.Exceptions)
		}
		require.NoError(t, br.Release(b.ctx, runtime.ReleaseOpts{}, j.Ref))
		require.Equal(t, 2, mustReserve(t, b, "default", 1).Jobs[0].Attempts, "released: the attempt was used")
	})
}
