package laravel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
)

// reservedAs is payload(id) as a pop reserves it: attempts one more,
// every other byte as pushed.
func reservedAs(id string, attempts int) string {
	return strings.Replace(string(payload(id)), `"attempts":0}`, fmt.Sprintf(`"attempts":%d}`, attempts), 1)
}

// A payload written by another producer keeps its spacing, escapes, key
// order and number forms in the reserved copy; only attempts changes.
func TestPopKeepsPayloadBytes(t *testing.T) {
	t.Parallel()
	const pushed = ` {"job" : "App\\Jobs\\X@handle", "data":{"a\/b":[],"n":1.50,"u":"\u00e9"}, "attempts" : 4 ,"id":"x","maxTries":null} `
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, q := b.ctx, b.q
			require.NoError(t, q.Push(ctx, "default", []byte(pushed)))
			r, err := q.Pop(ctx, "default")
			require.NoError(t, err)
			require.NoError(t, r.DecodeErr)
			require.Equal(t, pushed, string(r.Raw))
			require.Equal(t, strings.Replace(pushed, `"attempts" : 4 ,`, `"attempts" : 5 ,`, 1), string(r.Reserved))
			require.EqualValues(t, 5, r.Payload.Attempts)
			members, err := b.rdb.ZRange(ctx, b.keys(":reserved"), 0, -1).Result()
			require.NoError(t, err)
			require.Equal(t, []string{string(r.Reserved)}, members)
			require.NoError(t, q.Delete(ctx, r))
		})
	}
}

// A pop expects the job the last pop left first; when another worker has
// taken it, or it was replaced, the pop reserves the job that is first
// now, from its own bytes.
func TestPopAfterTheHeadMoved(t *testing.T) {
	t.Parallel()
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, q := b.ctx, b.q
			// Another process's connection: its own expectations.
			other, err := laravel.NewQueue(b.rdb, q.Config())
			require.NoError(t, err)
			require.NoError(t, q.Push(ctx, "default", payload("a"), payload("b"), payload("c"), payload("d")))

			r, err := q.Pop(ctx, "default") // a; q expects b next
			require.NoError(t, err)
			require.Equal(t, reservedAs("a", 1), string(r.Reserved))
			r, err = other.Pop(ctx, "default") // b, which q expects
			require.NoError(t, err)
			require.Equal(t, reservedAs("b", 1), string(r.Reserved))
			r, err = q.Pop(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, reservedAs("c", 1), string(r.Reserved), "c, not b again")

			// q expects d; the first job is now another payload.
			require.NoError(t, b.rdb.LSet(ctx, b.keys(""), 0, string(payload("e"))).Err())
			r, err = q.Pop(ctx, "default")
			require.NoError(t, err)
			require.Equal(t, string(payload("e")), string(r.Raw))
			require.Equal(t, reservedAs("e", 1), string(r.Reserved))

			r, err = q.Pop(ctx, "default")
			require.NoError(t, err)
			require.Nil(t, r)
			members, err := b.rdb.ZRange(ctx, b.keys(":reserved"), 0, -1).Result()
			require.NoError(t, err)
			require.ElementsMatch(t, []string{reservedAs("a", 1), reservedAs("b", 1), reservedAs("c", 1), reservedAs("e", 1)}, members)
		})
	}
}

// popRace pushes n jobs in small batches while the poppers of each of qs
// take them, each popper deleting what it pops and checking the reserved
// copy. It returns how often each job was popped, and a function that
// waits until the Go poppers have stopped: on an empty queue, once the
// pushes are done.
func popRace(t *testing.T, ctx context.Context, qs []*laravel.Queue, perQueue, n int) (counts func() map[string]int, wait func()) {
	t.Helper()
	var (
		mu        sync.Mutex
		popped    = map[string]int{}
		pushed    atomic.Bool
		contended atomic.Int64
		wg        sync.WaitGroup
	)
	for _, q := range qs {
		for range perQueue {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					r, err := q.Pop(ctx, "default")
					if errors.Is(err, laravel.ErrContended) {
						contended.Add(1)
						continue
					}
					if err != nil {
						t.Errorf("pop: %v", err)
						return
					}
					if r == nil {
						if pushed.Load() {
							return
						}
						time.Sleep(time.Millisecond)
						continue
					}
					if r.DecodeErr != nil || r.Payload.Attempts != 1 || string(r.Reserved) != reservedAs(r.Payload.ID, 1) {
						t.Errorf("reserved %q as %q: %v", r.Raw, r.Reserved, r.DecodeErr)
					}
					if err := q.Delete(ctx, r); err != nil {
						t.Errorf("delete %s: %v", r.Payload.ID, err)
					}
					mu.Lock()
					popped[r.Payload.ID]++
					mu.Unlock()
				}
			}()
		}
	}
	for i := 0; i < n; i += 10 {
		batch := make([][]byte, 0, 10)
		for j := i; j < min(i+10, n); j++ {
			batch = append(batch, payload(fmt.Sprint(j)))
		}
		require.NoError(t, qs[0].Push(ctx, "default", batch...))
	}
	pushed.Store(true)
	return func() map[string]int {
			mu.Lock()
			defer mu.Unlock()
			out := make(map[string]int, len(popped))
			for k, v := range popped {
				out[k] = v
			}
			return out
		}, func() {
			wg.Wait()
			t.Logf("%d pops gave up to contention and were tried again", contended.Load())
		}
}

// Two Go workers, each with goroutines of its own, pop one queue while
// jobs arrive: every job is reserved once, by one of them, and none is
// lost.
func TestPopRace(t *testing.T) {
	t.Parallel()
	const n = 2000
	for name, b := range openQueues(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
			defer cancel()
			other, err := laravel.NewQueue(b.rdb, b.q.Config())
			require.NoError(t, err)
			counts, wait := popRace(t, ctx, []*laravel.Queue{b.q, other}, 4, n)
			wait()
			poppedOnce(t, ctx, b.q, counts(), n)
		})
	}
}

// As TestPopRace, with Laravel's own RedisQueue::pop in a PHP process
// popping the same queue.
func TestPopRaceWithLaravel(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 2000
	other, err := laravel.NewQueue(b.q.Client(), b.q.Config())
	require.NoError(t, err)
	php := b.command(ctx, "pop.php", "default", "0", "stop")
	var stderr strings.Builder
	php.Stderr = &stderr
	require.NoError(t, php.Start())
	waitFor(t, ctx, "pop.php to start", func() bool { return b.reported(t, ctx, "ready") })
	counts, wait := popRace(t, ctx, []*laravel.Queue{b.q, other}, 2, n)
	wait()
	require.NoError(t, b.q.Client().Set(ctx, b.prefix+"stop", 1, 0).Err())
	require.NoError(t, php.Wait(), "pop.php: %s", stderr.String())

	popped := counts()
	phpPopped := 0
	for _, line := range b.results(t, ctx)[1:] { // after "ready"
		f := strings.Split(line, "|")
		require.Equal(t, []string{"popped", f[1], "1", "1"}, f, "Laravel reads attempts 1 from both copies")
		popped[f[1]]++
		phpPopped++
	}
	poppedOnce(t, ctx, b.q, popped, n)
	t.Logf("Laravel popped %d of %d jobs", phpPopped, n)
}

// A Go worker's reservation that runs out goes back to the queue with
// the attempts of its reserved copy, so Laravel's worker that pops it
// next counts the Go attempt.
func TestExpiredGoReservationCountsForLaravel(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, b.q.Push(ctx, "default", payload("a")))
	r, err := b.q.Pop(ctx, "default")
	require.NoError(t, err)
	require.EqualValues(t, 1, r.Payload.Attempts)
	// The reservation runs out.
	require.NoError(t, b.q.Client().ZAdd(ctx, b.prefix+"queues:default:reserved", redis.Z{Score: 1, Member: string(r.Reserved)}).Err())
	b.run(t, ctx, "pop.php", "default", "1", "stop")
	require.Equal(t, []string{"ready", "popped|a|2|2"}, b.results(t, ctx))
}

// poppedOnce checks that popped counts each of the jobs 0..n-1 once,
// and that q's default queue is empty.
func poppedOnce(t *testing.T, ctx context.Context, q *laravel.Queue, popped map[string]int, n int) {
	t.Helper()
	require.Len(t, popped, n)
	for i := range n {
		require.Equal(t, 1, popped[fmt.Sprint(i)], "job %d", i)
	}
	s, err := q.Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{}, s)
}
