package faults_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/harness"
	mailv1 "github.com/jobgen/jobgen/faults/internal/rolling/v1/mail"
	mailv2 "github.com/jobgen/jobgen/faults/internal/rolling/v2/mail"
	"github.com/jobgen/jobgen/faults/internal/rolling/workermain"
	"github.com/jobgen/jobgen/runtime"
)

// TestRollingDeploy deploys version 2 of a job whose field To is renamed
// Recipient, with an upgrade from version 1, over a queue of 100,000
// version 1 jobs (5,000 in CI). Worker processes of two binaries, built
// from the two versions of the job's package, run side by side; the
// version 1 workers are stopped one by one, each replaced by a version 2
// one, while producers dispatch jobs of both versions. Nothing is lost
// or failed, no body fails to decode, every handler saw the renamed
// field's value as it was dispatched, and the version 1 workers gave
// the version 2 jobs they reserved back without using an attempt: no
// job has an attempt that no handler run used.
func TestRollingDeploy(t *testing.T) {
	backlog := harness.Scale(5_000, 100_000)
	live := harness.Scale(1_000, 10_000) // dispatched of each version during the deploy
	const v1Workers = 3
	srv := harness.StartRedis(t)
	ctx := context.Background()
	const prefix = "rolling"
	e, err := runtime.Open(ctx, srv.URL(), runtime.EngineConfig{Prefix: prefix, FailedMaxCount: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	dctx := runtime.WithDispatcher(ctx, e)
	bins := buildWorkers(t)

	var wantMu sync.Mutex
	want := map[string]string{} // job ID -> the value dispatched
	record := func(id, value string) {
		wantMu.Lock()
		want[id] = value
		wantMu.Unlock()
	}
	value := func(v int, seq int) string { return fmt.Sprintf("v%d-%d@example.com", v, seq) }

	// A few version 2 jobs first, so that the version 1 workers meet
	// some at once; then the backlog of version 1 jobs.
	for i := range live / 10 {
		j := mailv2.SendEmail{Seq: int64(i), Recipient: value(2, i)}
		id, err := j.Dispatch(dctx)
		require.NoError(t, err)
		record(id, j.Recipient)
	}
	for start := 0; start < backlog; start += 500 {
		var out []runtime.Outgoing
		for i := start; i < min(backlog, start+500); i++ {
			j := mailv1.SendEmail{Seq: int64(i), To: value(1, i)}
			env, err := runtime.NewPendingDispatch(j).Envelope()
			require.NoError(t, err)
			out = append(out, runtime.Outgoing{Envelope: env})
			record(env.ID, j.To)
		}
		require.NoError(t, e.PushMany(ctx, out))
	}

	dir := t.TempDir()
	var procs []*rollingProc
	startWorker := func(version int) *rollingProc {
		p := startRolling(t, bins[version], dir, len(procs), version, srv.URL(), prefix)
		procs = append(procs, p)
		return p
	}
	var v1 []*rollingProc
	for range v1Workers {
		v1 = append(v1, startWorker(1))
	}
	startWorker(2)

	// Producers dispatch both versions while the deploy goes on.
	var producers sync.WaitGroup
	produce := func(version int) {
		defer producers.Done()
		for i := live / 10; i < live; i++ {
			var id, v string
			var err error
			if version == 1 {
				j := mailv1.SendEmail{Seq: int64(i), To: value(1, backlog+i)}
				id, err = j.Dispatch(dctx)
				v = j.To
			} else {
				j := mailv2.SendEmail{Seq: int64(i), Recipient: value(2, i)}
				id, err = j.Dispatch(dctx)
				v = j.Recipient
			}
			if err != nil {
				t.Errorf("dispatch version %d: %v", version, err)
				return
			}
			record(id, v)
			if i%100 == 0 {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	producers.Add(2)
	go produce(1)
	go produce(2)

	// Stop the version 1 workers one by one as the backlog drains, each
	// replaced by a version 2 worker.
	ins := runtime.NewInspector(e)
	for k, p := range v1 {
		threshold := int64(backlog) * int64(v1Workers-1-k) / int64(v1Workers+1)
		waitFor(t, harness.Scale(3*time.Minute, 20*time.Minute), func() bool {
			s, err := ins.Sizes(ctx, "rolling")
			return err == nil && s.Ready+s.Delayed < threshold+int64(live)
		}, "the backlog drains to %d", threshold)
		p.stop(t)
		startWorker(2)
	}
	producers.Wait()
	waitFor(t, harness.Scale(3*time.Minute, 20*time.Minute), func() bool {
		s, err := ins.Sizes(ctx, "rolling")
		return err == nil && s.Total() == 0
	}, "the queue drains")
	for _, p := range procs {
		if !p.stopped {
			p.stop(t)
		}
	}

	// Check the ledgers against what was dispatched.
	type run struct {
		value   string
		attempt int
		version int
	}
	runs := map[string][]run{}
	var givenBack, returned int64
	for _, p := range procs {
		f, err := os.Open(p.ledger)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			switch {
			case len(fs) == 6 && fs[0] == "R":
				attempt, _ := strconv.Atoi(fs[4])
				version, _ := strconv.Atoi(fs[5])
				runs[fs[1]] = append(runs[fs[1]], run{fs[3], attempt, version})
			case len(fs) == 3 && fs[0] == "S":
				n, _ := strconv.ParseInt(fs[1], 10, 64)
				r, _ := strconv.ParseInt(fs[2], 10, 64)
				givenBack += n
				returned += r
			default:
				t.Errorf("%s: bad ledger line %q", p.ledger, sc.Text())
			}
		}
		require.NoError(t, f.Close())
	}
	var lost, wrong, unearned, dup int
	for id, v := range want {
		rs := runs[id]
		if len(rs) == 0 {
			lost++
			continue
		}
		if len(rs) > 1 {
			dup++
		}
		maxAttempt := 0
		for _, r := range rs {
			if r.value != v {
				wrong++
				if wrong <= 5 {
					t.Errorf("job %s: handler of version %d saw %q, dispatched %q", id, r.version, r.value, v)
				}
			}
			maxAttempt = max(maxAttempt, r.attempt)
		}
		if maxAttempt > len(rs) {
			unearned++
			if unearned <= 5 {
				t.Errorf("job %s: attempt %d after %d handler runs: a give-back used an attempt", id, maxAttempt, len(rs))
			}
		}
	}
	sizes, err := ins.Sizes(ctx, "rolling")
	require.NoError(t, err)
	// A body that does not decode fails its job with an error matching
	// runtime.ErrDecode: look for its messages in the failed store and
	// in the workers' logs.
	decodeMarks := []string{"cannot decode", "does not decode", "(wire key", "its body has key"}
	decodeErrors := 0
	failed, err := ins.Failed().List(ctx, "rolling", 0, 1000)
	require.NoError(t, err)
	for _, f := range failed {
		for _, m := range decodeMarks {
			if strings.Contains(f.Error, m) {
				decodeErrors++
				break
			}
		}
	}
	for _, p := range procs {
		b, _ := os.ReadFile(p.log)
		for _, m := range decodeMarks {
			decodeErrors += strings.Count(string(b), m)
		}
	}
	t.Logf("dispatched %d, ran %d, lost %d, duplicated %d, wrong value %d, attempts not used by a run %d, failed %d, decode errors %d; given back for a newer worker %d times, returned at stops %d",
		len(want), len(runs), lost, dup, wrong, unearned, sizes.Failed, decodeErrors, givenBack, returned)
	require.Equal(t, backlog+live+live-live/10, len(want))
	require.Zero(t, lost, "lost")
	require.Zero(t, wrong, "handlers that saw another value than dispatched")
	require.Zero(t, unearned, "attempts used by a give-back")
	require.Zero(t, sizes.Failed, "failed")
	require.Zero(t, decodeErrors, "decode errors")
	require.Positive(t, givenBack, "the version 1 workers met version 2 jobs and gave them back")
}

// buildWorkers builds the two worker binaries, by version.
func buildWorkers(t *testing.T) map[int]string {
	t.Helper()
	dir := t.TempDir()
	bins := map[int]string{}
	for _, v := range []int{1, 2} {
		bin := filepath.Join(dir, fmt.Sprintf("worker-v%d", v))
		cmd := exec.Command("go", "build", "-o", bin, fmt.Sprintf("./internal/rolling/v%d/worker", v))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "build worker version %d:\n%s", v, out)
		bins[v] = bin
	}
	return bins
}

// rollingProc is one worker process of the test.
type rollingProc struct {
	cmd     *exec.Cmd
	ledger  string
	log     string
	done    chan error
	stopped bool
}

func startRolling(t *testing.T, bin, dir string, n, version int, url, prefix string) *rollingProc {
	t.Helper()
	name := fmt.Sprintf("w%d-v%d", n, version)
	cfg := workermain.Config{URL: url, Prefix: prefix, Queue: "rolling", Name: name, Concurrency: 8,
		Ledger: filepath.Join(dir, name+".ledger"), Log: filepath.Join(dir, name+".log")}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), workermain.ConfigEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	p := &rollingProc{cmd: cmd, ledger: cfg.Ledger, log: cfg.Log, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if !p.stopped {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	waitFor(t, 30*time.Second, func() bool { _, err := os.Stat(cfg.Ledger + ".ready"); return err == nil }, "worker %s starts", name)
	return p
}

// stop stops the worker with SIGTERM, as a deploy does, and waits for it
// to exit cleanly.
func (p *rollingProc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "worker exit")
	case <-time.After(60 * time.Second):
		t.Fatal("worker did not stop within 60s of SIGTERM")
	}
	p.stopped = true
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting: "+format, append([]any{timeout}, args...)...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
