package laravel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// chainSpec is a chain as chains_catch.php pushes it with Laravel's
// PendingChain, with a catch callback that reports "catch|NAME|CLASS" if
// Catch is set.
type chainSpec struct {
	Name  string     `json:"name"`
	Catch bool       `json:"catch"`
	Links []linkSpec `json:"links"`
}

// linkSpec is a link of a chainSpec: a Scenario, or ChargeCardPhpOnly, a
// class no Go type is mapped to.
type linkSpec struct {
	Class   string   `json:"class"`
	Name    string   `json:"name,omitempty"`
	Steps   []string `json:"steps,omitempty"`
	Tries   *int     `json:"tries,omitempty"`
	Backoff []int    `json:"backoff,omitempty"`
}

func scenarioLink(name string, tries int, steps ...string) linkSpec {
	return linkSpec{Class: "Scenario", Name: name, Steps: steps, Tries: intp(tries), Backoff: []int{0}}
}

// pushChains pushes chains onto queue with Laravel's own code.
func (b phpBundle) pushChains(t *testing.T, ctx context.Context, queue string, chains []chainSpec) {
	t.Helper()
	in, err := json.Marshal(chains)
	require.NoError(t, err)
	cmd := b.command(ctx, "chains_catch.php", queue)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// scenarioWorker is a Go worker of the Scenario jobs (and the classes of
// newMapper) on queue, reporting to the PHP jobs' results list.
func (b phpBundle) scenarioWorker(t *testing.T, queue string, cfg laravel.WorkerConfig) *laravel.Worker {
	t.Helper()
	m := newMapper()
	laravel.Map[Scenario](m, `App\Jobs\Scenario`, Scenario{}.JobName())
	r := scenarioRouter(b.q.Client(), b.prefix+"results")
	runtime.Register(r, SendWelcomeEmail{}.JobName(), func(context.Context, SendWelcomeEmail) error { return nil })
	runtime.Register(r, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return nil })
	cfg.Queues = []string{queue}
	if cfg.Sleep == 0 {
		cfg.Sleep = 100 * time.Millisecond
	}
	if cfg.Failed == nil && cfg.FailedJobs == nil {
		cfg.Failed = runtime.NewInspector(b.engine).Failed()
	}
	w, err := laravel.NewWorker(b.q, m, r, cfg)
	require.NoError(t, err)
	return w
}

// outcomeLines are the results that tell what the jobs did: each
// attempt's step (without its time), each catch callback, each failed
// hook, each run of the PHP-only class; sorted.
func outcomeLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		f := strings.Split(l, "|")
		switch f[0] {
		case "attempt":
			out = append(out, strings.Join(f[:4], "|"))
		case "catch", "failed-hook":
			out = append(out, l)
		case "ran":
			if f[1] == "ChargeCardPhpOnly" {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

// A chain with a catch callback is Laravel's worker's to run, every
// link of it: a Go worker leaves it on its queue, untouched, and
// Laravel's worker runs it and its catch exactly once when a link fails,
// the last link included. So is a chain with a link no Go type is mapped
// to. With FailUnmapped a Go worker fails such a chain, saying why.
func TestCatchChainIsLeftForPHP(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b.pushChains(t, ctx, "catch", []chainSpec{
		{Name: "second fails", Catch: true, Links: []linkSpec{scenarioLink("a1", 1, "ok"), scenarioLink("a2", 1, "fail")}},
		// A chain of one link: its $chained is empty, its catch is not.
		{Name: "only link throws", Catch: true, Links: []linkSpec{scenarioLink("b1", 1, "throw")}},
		{Name: "unmapped link", Links: []linkSpec{scenarioLink("c1", 1, "ok"), {Class: "ChargeCardPhpOnly"}, scenarioLink("c3", 1, "ok")}},
	})
	before, err := b.q.Client().LRange(ctx, b.prefix+"queues:catch", 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, before, 3)

	w := b.scenarioWorker(t, "catch", laravel.WorkerConfig{StopWhenEmpty: true})
	require.NoError(t, w.Run(ctx))
	after, err := b.q.Client().LRange(ctx, b.prefix+"queues:catch", 0, -1).Result()
	require.NoError(t, err)
	require.Equal(t, before, after, "the Go worker left the chains as they were pushed")
	failed, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
	require.NoError(t, err)
	require.Zero(t, failed, "the Go worker failed none")
	require.GreaterOrEqual(t, w.LeftForPHP()[`App\Jobs\Scenario (chain with catch callbacks)`], int64(1))
	require.Empty(t, outcomeLines(b.results(t, ctx)), "the Go worker ran nothing")

	b.run(t, ctx, "work.php", "catch", "1", "60", "0", "1", "0")
	require.Equal(t, []string{
		"attempt|a1|1|ok",
		"attempt|a2|1|fail",
		"attempt|b1|1|throw",
		"attempt|c1|1|ok",
		"attempt|c3|1|ok",
		"catch|only link throws|RuntimeException",
		"catch|second fails|RuntimeException",
		"failed-hook|a2",
		"failed-hook|b1",
		"ran|ChargeCardPhpOnly|1|1",
	}, outcomeLines(b.results(t, ctx)))

	// On a queue only Go serves, FailUnmapped fails them, saying why.
	b.pushChains(t, ctx, "catch-go", []chainSpec{
		{Name: "catch", Catch: true, Links: []linkSpec{scenarioLink("d1", 1, "ok")}},
		{Name: "unmapped link", Links: []linkSpec{scenarioLink("e1", 1, "ok"), {Class: "ChargeCardPhpOnly"}}},
	})
	w = b.scenarioWorker(t, "catch-go", laravel.WorkerConfig{StopWhenEmpty: true, FailUnmapped: true})
	require.NoError(t, w.Run(ctx))
	list, err := runtime.NewInspector(b.engine).Failed().List(ctx, "laravel", 0, 10)
	require.NoError(t, err)
	var errs []string
	for _, fj := range list {
		errs = append(errs, fj.Error)
	}
	require.Len(t, errs, 2)
	slices.Sort(errs)
	require.Contains(t, errs[1], `App\Jobs\Scenario is a link of a chain with 1 catch callback(s), PHP closures that only Laravel's worker can call when a link fails`)
	require.Contains(t, errs[0], `App\Jobs\Scenario heads a chain whose link 1 after it is App\Jobs\ChargeCardPhpOnly, which no Go type is mapped to`)
}

// catchFleet is the mixed fleet's chains: 50 with a catch callback, a
// link of some failing for good (so the catch must run) and of others
// retried to success (so it must not), 10 with a link of a class no Go
// type is mapped to, and 20 plain chains that either worker may run, 10
// of them first.
func catchFleet() []chainSpec {
	var chains []chainSpec
	for i := range 10 {
		n := func(k int) string { return fmt.Sprintf("p%d-%d", i, k) }
		chains = append(chains, chainSpec{Name: fmt.Sprintf("p%d", i), Links: []linkSpec{scenarioLink(n(1), 1, "ok"), scenarioLink(n(2), 2, "throw", "ok")}})
	}
	for i := range 50 {
		n := func(k int) string { return fmt.Sprintf("c%d-%d", i, k) }
		c := chainSpec{Name: fmt.Sprintf("c%d", i), Catch: true}
		switch i % 5 {
		case 0: // the second link fails itself: the catch runs, the third never
			c.Links = []linkSpec{scenarioLink(n(1), 1, "ok"), scenarioLink(n(2), 3, "fail"), scenarioLink(n(3), 1, "ok")}
		case 1: // the first link throws until its tries run out
			c.Links = []linkSpec{scenarioLink(n(1), 2, "throw"), scenarioLink(n(2), 1, "ok")}
		case 2: // the last link throws once, then succeeds: no catch
			c.Links = []linkSpec{scenarioLink(n(1), 1, "ok"), scenarioLink(n(2), 1, "ok"), scenarioLink(n(3), 2, "throw", "ok")}
		case 3: // the last link fails on its only try
			c.Links = []linkSpec{scenarioLink(n(1), 1, "ok"), scenarioLink(n(2), 1, "throw")}
		default:
			c.Links = []linkSpec{scenarioLink(n(1), 1, "ok"), scenarioLink(n(2), 1, "ok"), scenarioLink(n(3), 1, "ok")}
		}
		chains = append(chains, c)
	}
	for i := range 10 {
		n := func(k int) string { return fmt.Sprintf("u%d-%d", i, k) }
		last := scenarioLink(n(3), 1, "ok")
		if i%2 == 0 {
			last = scenarioLink(n(3), 2, "throw", "ok")
		}
		chains = append(chains, chainSpec{Name: fmt.Sprintf("u%d", i), Links: []linkSpec{scenarioLink(n(1), 1, "ok"), {Class: "ChargeCardPhpOnly"}, last}})
		n = func(k int) string { return fmt.Sprintf("q%d-%d", i, k) }
		chains = append(chains, chainSpec{Name: fmt.Sprintf("q%d", i), Links: []linkSpec{scenarioLink(n(1), 1, "ok"), scenarioLink(n(2), 1, "ok")}})
	}
	return chains
}

// 1 Laravel worker and 1 Go worker run 50 chains with a catch callback
// and 10 with an unmapped link, among 20 plain ones: every chain completes, and each catch
// runs exactly when, and as often as, it runs on Laravel's worker alone.
func TestCatchChainsMixedFleet(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	chains := catchFleet()

	var want []string
	t.Run("laravel", func(t *testing.T) {
		b := setupPHP(t)
		b.pushChains(t, ctx, "fleet", chains)
		b.run(t, ctx, "work.php", "fleet", "1", "60", "0", "1", "1")
		want = outcomeLines(b.results(t, ctx))
		require.True(t, b.empty(t, ctx, "fleet"))
	})
	require.Equal(t, 30, countPrefix(want, "catch|"), "Laravel's worker ran the catch of the 30 chains with a link that fails:\n%s", strings.Join(want, "\n"))

	b := setupPHP(t)
	b.pushChains(t, ctx, "fleet", chains)
	w := b.scenarioWorker(t, "fleet", laravel.WorkerConfig{})
	var goRan atomic.Int64
	w.Subscribe(func(e runtime.Event) {
		if e.Kind == runtime.JobProcessing {
			goRan.Add(1)
		}
	})
	first := make(chan struct{})
	var once sync.Once
	w.Subscribe(func(e runtime.Event) {
		if e.Kind == runtime.JobProcessed {
			once.Do(func() { close(first) })
		}
	})
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	// Laravel's worker starts once the Go worker has run a job, so that
	// both take part whatever the machine's speed.
	select {
	case <-first:
	case <-ctx.Done():
		t.Fatal("the Go worker ran no job")
	}
	phpCtx, stopPHP := context.WithCancel(ctx)
	defer stopPHP()
	var stderr bytes.Buffer
	php := b.command(phpCtx, "work.php", "fleet", "1", "60", "0", "0", "1")
	php.Stderr = &stderr
	require.NoError(t, php.Start())
	var got []string
	waitFor(t, ctx, "the chains to complete", func() bool {
		got = outcomeLines(b.results(t, ctx))
		return len(got) >= len(want) && b.empty(t, ctx, "fleet")
	})
	stopPHP()
	_ = php.Wait()
	stop()
	require.NoError(t, <-done)
	require.Equal(t, want, outcomeLines(b.results(t, ctx)), "the same attempts, catches and failed hooks as on Laravel's worker alone; PHP: %s", stderr.String())
	n, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
	require.NoError(t, err)
	require.Zero(t, n, "the Go worker failed none")
	t.Logf("of %d attempts the Go worker ran %d; it left a link of a chain with a catch first %d times, one of a chain with an unmapped link %d times, the PHP-only class %d times",
		len(want)-countPrefix(want, "catch|", "failed-hook|", "ran|"), goRan.Load(),
		w.LeftForPHP()[`App\Jobs\Scenario (chain with catch callbacks)`], w.LeftForPHP()[`App\Jobs\Scenario (chain Go cannot continue)`],
		w.Unmapped()[`App\Jobs\ChargeCardPhpOnly`])
}

// countPrefix counts the lines that start with any of prefixes.
func countPrefix(lines []string, prefixes ...string) int {
	n := 0
	for _, l := range lines {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				n++
				break
			}
		}
	}
	return n
}
