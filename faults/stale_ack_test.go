package faults_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestStaleAckRefused drives the engine directly: worker A reserves a
// job under a short lease and stalls past it; worker B reserves the job
// again and acks, releases or keeps it; then A acks, releases, fails or
// extends it with its stale token. Every stale call must be refused with
// ErrLeaseLost and change nothing, and the job must never come back.
func TestStaleAckRefused(t *testing.T) {
	const lanes = 8
	for _, backend := range []string{"redis", "embedded"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			runs := 1000
			if backend == "embedded" {
				// miniredis's Lua is slow under -race.
				runs = harness.Scale(200, 1000)
			}
			url := "embedded://" + fmt.Sprintf("stale-%p", t)
			if backend == "redis" {
				url = harness.StartRedis(t).URL()
			}
			e, err := runtime.Open(context.Background(), url, runtime.EngineConfig{Prefix: "faults", FailedMaxCount: -1})
			require.NoError(t, err)
			t.Cleanup(func() { _ = e.Close() })

			var mu sync.Mutex
			tally := map[string]int{}
			var wg sync.WaitGroup
			for lane := range lanes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					q := fmt.Sprintf("stale-%d", lane)
					for range runs / lanes {
						got := staleRun(t, e, q, rand.IntN(3), rand.IntN(5))
						if got == "" {
							return
						}
						mu.Lock()
						tally[got]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			refused := 0
			for _, n := range tally {
				refused += n
			}
			t.Logf("figures (%s): stale calls refused in %d runs of %d: %v", backend, refused, runs, tally)
			require.Equal(t, runs, refused)
		})
	}
}

// staleRun is one run on queue q; b says what B does (0 ack, 1 keep,
// 2 release) and op what stale A tries. It returns a label of the run,
// or "" after failing the test.
func staleRun(t *testing.T, e *runtime.Engine, q string, b, op int) string {
	ctx := context.Background()
	fail := func(format string, args ...any) string {
		t.Errorf(q+": "+format, args...)
		return ""
	}
	env := &runtime.Envelope{Name: faultworker.TaskName, Queue: q, Body: []byte{0x80}}
	if err := e.Push(ctx, env); err != nil {
		return fail("push: %v", err)
	}
	a, err := runtime.NewBroker(e).Reserve(ctx, q, 1, 2*time.Millisecond)
	if err != nil || len(a.Jobs) != 1 {
		return fail("A reserves: %v %v", a.Jobs, err)
	}
	time.Sleep(8 * time.Millisecond)
	bb, err := runtime.NewBroker(e).Reserve(ctx, q, 1, time.Minute)
	if err != nil || len(bb.Jobs) != 1 || bb.Jobs[0].ID != env.ID || bb.Jobs[0].Attempts != 2 {
		return fail("B reserves the expired job again: %+v %v", bb.Jobs, err)
	}
	bRef := bb.Jobs[0].Ref
	var want runtime.Sizes
	switch b {
	case 0:
		err = runtime.NewBroker(e).Ack(ctx, bRef)
	case 2:
		err = runtime.NewBroker(e).Release(ctx, runtime.ReleaseOpts{}, bRef)
		want.Ready = 1
	default:
		want.Reserved = 1
	}
	if err != nil {
		return fail("B settles: %v", err)
	}

	aRef := a.Jobs[0].Ref
	var ops = []string{"ack", "release", "release later", "fail", "extend"}
	switch op {
	case 0:
		err = runtime.NewBroker(e).Ack(ctx, aRef)
	case 1:
		err = runtime.NewBroker(e).Release(ctx, runtime.ReleaseOpts{Exception: true}, aRef)
	case 2:
		err = runtime.NewBroker(e).Release(ctx, runtime.ReleaseOpts{Delay: time.Hour}, aRef)
	case 3:
		err = runtime.NewBroker(e).Fail(ctx, runtime.Failure{Ref: aRef, Name: env.Name, Err: fmt.Errorf("stale"), Attempts: 1})
	case 4:
		var lost []runtime.Ref
		lost, err = runtime.NewBroker(e).Extend(ctx, time.Hour, aRef)
		if err == nil && len(lost) == 1 {
			err = runtime.ErrLeaseLost
		}
	}
	if !errorsIsLeaseLost(err) {
		return fail("stale %s by A after B's %d: want ErrLeaseLost, got %v", ops[op], b, err)
	}
	s, err := runtime.NewInspector(e).Sizes(ctx, q)
	if err != nil {
		return fail("sizes: %v", err)
	}
	if s != want {
		return fail("after stale %s: sizes %+v, want %+v (resurrected?)", ops[op], s, want)
	}
	// B, or a third worker, finishes the job; then nothing is left.
	switch b {
	case 1:
		err = runtime.NewBroker(e).Ack(ctx, bRef)
	case 2:
		c, rerr := runtime.NewBroker(e).Reserve(ctx, q, 1, time.Minute)
		if rerr != nil || len(c.Jobs) != 1 {
			return fail("C reserves the released job: %+v %v", c.Jobs, rerr)
		}
		err = runtime.NewBroker(e).Ack(ctx, c.Jobs[0].Ref)
	}
	if err != nil {
		return fail("finish: %v", err)
	}
	if s, err := runtime.NewInspector(e).Sizes(ctx, q); err != nil || s != (runtime.Sizes{}) {
		return fail("at the end: sizes %+v, %v", s, err)
	}
	if p, err := harness.Audit(ctx, e.Client(), "faults", q); err != nil || len(p) > 0 {
		return fail("audit: %v %v", p, err)
	}
	return ops[op]
}

func errorsIsLeaseLost(err error) bool {
	return err != nil && (err == runtime.ErrLeaseLost || isLeaseLost(err))
}

// TestStaleAckAfterSIGSTOP stops a real worker with SIGSTOP in the middle
// of a job, past its lease; a second worker runs the job to the end;
// then the first is continued. Whatever the first worker's handler
// returns — success, an exception, or fail now — its stale ack, release
// or fail is refused, and the job neither runs a third time nor lands in
// the failed store.
func TestStaleAckAfterSIGSTOP(t *testing.T) {
	for _, kind := range []string{faultworker.KindOK, faultworker.KindError, faultworker.KindFail} {
		name := map[string]string{faultworker.KindOK: "ack", faultworker.KindError: "release", faultworker.KindFail: "fail"}[kind]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const retryAfter = time.Second
			b := setup(t)
			f := b.fleet(t, func(c *faultworker.Config) {
				c.RetryAfter, c.Timeout, c.Concurrency = retryAfter, 900*time.Millisecond, 1
			})
			f.Start(1)
			a := f.Proc(0)
			_, err := b.disp.Push(b.ctx, faultworker.Task{Millis: 600, Kind: kind, Until: 1, Opts: runtime.JobOptions{Tries: 3}})
			require.NoError(t, err)
			waitRecord(t, a.Ledger, 'S', 1)
			f.Signal(0, syscall.SIGSTOP)
			time.Sleep(retryAfter + 300*time.Millisecond)

			bp := f.Replace(1)
			waitRecord(t, bp.Ledger, 'F', 2)
			harness.Drain(t, b.engine, queue, 10*time.Second)
			f.Signal(0, syscall.SIGCONT)
			time.Sleep(1500 * time.Millisecond) // A's handler ends and it settles

			f.StopAll(10 * time.Second)
			o := b.check(t, f)
			require.Zero(t, o.Failed, "A's stale fail is refused")
			require.Equal(t, 2, o.Runs, "no third run: nothing came back")
			refusal := f.LogLines(a.Name+".log", "lease")
			if len(refusal) == 0 {
				refusal = f.LogLines(`"worker":"`+a.Name+`"`, "lease")
			}
			require.NotEmpty(t, refusal, "A logs that its lease was lost")
			t.Logf("figures: A's handler (%s case) came back after its lease; its settle was refused: %v", name, refusal)
		})
	}
}

// waitRecord waits for a ledger line of kind with the given attempt.
func waitRecord(t *testing.T, ledger string, kind byte, attempt int) {
	t.Helper()
	waitRecordIn(t, kind, attempt, ledger)
}

// waitRecordIn waits for a record of kind and attempt in any of ledgers.
func waitRecordIn(t *testing.T, kind byte, attempt int, ledgers ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, ledger := range ledgers {
			recs, _ := faultworker.ReadLedger(ledger)
			for _, r := range recs {
				if r.Kind == kind && r.Attempt == attempt {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %c record of attempt %d in %v", kind, attempt, ledgers)
}
