package laravel_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/phptest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// phpBundle is a Laravel connection shared by Go and by PHP processes
// that run Laravel's own queue code (testdata/php).
type phpBundle struct {
	php    string
	prefix string
	q      *laravel.Queue
	engine *runtime.Engine
	env    []string
	// url opens q; storeURL and storePrefix open engine.
	url, storeURL, storePrefix string
}

// setupPHP opens the connection with retry_after 90s, or retryAfter
// seconds if given.
func setupPHP(t *testing.T, retryAfter ...int) phpBundle {
	t.Helper()
	ra := 90
	if len(retryAfter) > 0 {
		ra = retryAfter[0]
	}
	php := phptest.Laravel(t)
	addr := redistest.Addr(t)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	prefix := redistest.Prefix(t) + "_laravel_database_"
	url := laravel.Scheme + "redis://" + addr + fmt.Sprintf("/0?prefix=%s&cache_prefix=%slaravel_cache:&retry_after=%d", prefix, prefix, ra)
	q, closeQ, err := laravel.Open(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = closeQ() })
	storeURL, storePrefix := "redis://"+addr+"/0", prefix+"jobgen"
	engine, err := runtime.Open(context.Background(), storeURL, runtime.EngineConfig{Prefix: storePrefix})
	require.NoError(t, err)
	t.Cleanup(func() { _ = engine.Close() })
	return phpBundle{php: php, prefix: prefix, q: q, engine: engine, url: url, storeURL: storeURL, storePrefix: storePrefix, env: append(os.Environ(),
		"REDIS_HOST="+host, "REDIS_PORT="+port, "REDIS_DB=0", "REDIS_PREFIX="+prefix, "RESULTS=results", fmt.Sprintf("RETRY_AFTER=%d", ra))}
}

// run runs a script of testdata/php to its end.
func (b phpBundle) run(t *testing.T, ctx context.Context, script string, args ...string) {
	t.Helper()
	cmd := b.command(ctx, script, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "php %s: %s%s", script, out, stderr.String())
}

func (b phpBundle) command(ctx context.Context, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, b.php, append([]string{filepath.Join("testdata", "php", script)}, args...)...)
	cmd.Env = b.env
	return cmd
}

// results returns what PHP jobs and events reported, one line each.
func (b phpBundle) results(t *testing.T, ctx context.Context) []string {
	t.Helper()
	lines, err := b.q.Client().LRange(ctx, b.prefix+"results", 0, -1).Result()
	require.NoError(t, err)
	return lines
}

// recorder is a pair of typed Go handlers that note each job they run.
type recorder struct {
	mu   sync.Mutex
	seen map[string]int // "SendWelcomeEmail|userId|email|tags" -> runs
	n    int
	full chan struct{}
	want int
}

func newRecorder(want int) *recorder {
	return &recorder{seen: map[string]int{}, full: make(chan struct{}), want: want}
}

func (r *recorder) note(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[key]++
	r.n++
	if r.n == r.want {
		close(r.full)
	}
}

func (r *recorder) router() *runtime.Router {
	rt := runtime.NewRouter()
	runtime.Register(rt, SendWelcomeEmail{}.JobName(), func(ctx context.Context, j SendWelcomeEmail) error {
		r.note(fmt.Sprintf("SendWelcomeEmail|%d|%s|%s", j.UserID, j.Email, strings.Join(j.Tags, ",")))
		return nil
	})
	runtime.Register(rt, ResizeAvatar{}.JobName(), func(ctx context.Context, j ResizeAvatar) error {
		q := "NULL"
		if j.Quality != nil {
			q = fmt.Sprint(*j.Quality)
		}
		r.note(fmt.Sprintf("ResizeAvatar|%d|%s|%s", j.UserID, joinInts(j.Sizes), q))
		return nil
	})
	return rt
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// wantJob is what push.php pushes as job i, as the handlers note it.
func wantJob(i int) string {
	if i%2 == 0 {
		return fmt.Sprintf("SendWelcomeEmail|%d|user%d@example.com|welcome,n%d", i, i, i)
	}
	q := "NULL"
	if i%4 == 1 {
		q = "0.5"
	}
	return fmt.Sprintf("ResizeAvatar|%d|64,%d|%s", i, 128+i, q)
}

// PHP pushes 1,000 jobs of two classes with Queue::push and Queue::later;
// a Go worker runs each exactly once with typed handlers.
func TestPHPPushesGoRuns(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 1000
	b.run(t, ctx, "push.php", fmt.Sprint(n), "default")

	rec := newRecorder(n)
	w, err := laravel.NewWorker(b.q, newMapper(), rec.router(), laravel.WorkerConfig{
		Concurrency: 8, Sleep: 100 * time.Millisecond, Failed: runtime.NewInspector(b.engine).Failed(),
	})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	select {
	case <-rec.full:
	case <-ctx.Done():
		t.Fatalf("ran %d of %d jobs", rec.n, n)
	}
	stop()
	require.NoError(t, <-done)

	for i := range n {
		require.Equal(t, 1, rec.seen[wantJob(i)], "job %d: %s", i, wantJob(i))
	}
	sizes, err := b.q.Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{}, sizes, "nothing left: every job deleted")
	failed, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
	require.NoError(t, err)
	require.Zero(t, failed)
}

// Go dispatches 1,000 jobs, every tenth delayed, onto the Laravel queue;
// Laravel's own worker runs each exactly once.
func TestGoDispatchesPHPRuns(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d, err := laravel.NewDispatcher(b.q, newMapper())
	require.NoError(t, err)
	const n = 1000
	var want []string
	for i := range n {
		var p *runtime.PendingDispatch
		if i%2 == 0 {
			p = runtime.NewPendingDispatch(SendWelcomeEmail{UserID: i, Email: fmt.Sprintf("go%d@example.com", i), Tags: []string{"go", fmt.Sprint(i)}})
			want = append(want, fmt.Sprintf("ran|SendWelcomeEmail|%d|go%d@example.com|go,%d|1", i, i, i))
		} else {
			q := float64(i) / 4
			p = runtime.NewPendingDispatch(ResizeAvatar{UserID: i, Sizes: []int{i, 2 * i}, Quality: &q})
			want = append(want, fmt.Sprintf("ran|ResizeAvatar|%d|%d,%d|%s|1", i, i, 2*i, phpFloat(q)))
		}
		if i%10 == 9 {
			p.Delay(time.Second)
		}
		_, err := dispatch(ctx, d, p)
		require.NoError(t, err)
	}
	sizes, err := b.q.Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{Ready: n - n/10, Delayed: n / 10}, sizes)

	// Laravel's worker, for exactly n jobs.
	b.run(t, ctx, "work.php", "default", "1", "60", fmt.Sprint(n), "0", "1")

	var ran []string
	for _, line := range b.results(t, ctx) {
		if strings.HasPrefix(line, "ran|") {
			ran = append(ran, line)
		}
	}
	sort.Strings(ran)
	sort.Strings(want)
	require.Equal(t, want, ran)
	sizes, err = b.q.Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{}, sizes)
}

// phpFloat is var_export's float: always with a decimal point.
func phpFloat(f float64) string {
	s := fmt.Sprint(f)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// jobFor is push.php's job i, as a Go job.
func jobFor(i int) runtime.Job {
	if i%2 == 0 {
		return SendWelcomeEmail{UserID: i, Email: fmt.Sprintf("user%d@example.com", i), Tags: []string{"welcome", fmt.Sprintf("n%d", i)}}
	}
	j := ResizeAvatar{UserID: i, Sizes: []int{64, 128 + i}}
	if i%4 == 1 {
		j.Quality = new(float64)
		*j.Quality = 0.5
	}
	return j
}

// PHP and Go both push to one queue, 2,000 jobs and 60 of a class no Go
// type is mapped to, and two Laravel workers and a Go worker drain it
// together: every job runs once, on one side or the other, and every
// PHP-only job on PHP's.
func TestMixedWorkersDrainOneQueue(t *testing.T) {
	t.Parallel()
	b := setupPHP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const half, phpOnly = 1000, 60
	b.run(t, ctx, "push_php_only.php", "0", fmt.Sprint(phpOnly/2), "default") // Go leaves these for PHP
	b.run(t, ctx, "push.php", fmt.Sprint(half), "default")                    // jobs 0..999
	b.run(t, ctx, "push_php_only.php", fmt.Sprint(phpOnly/2), fmt.Sprint(phpOnly/2), "default")
	d, err := laravel.NewDispatcher(b.q, newMapper())
	require.NoError(t, err)
	for i := half; i < 2*half; i++ { // jobs 1000..1999, every tenth delayed
		p := runtime.NewPendingDispatch(jobFor(i))
		if i%10 == 9 {
			p.Delay(time.Second)
		}
		_, err := dispatch(ctx, d, p)
		require.NoError(t, err)
	}

	rec := newRecorder(-1)
	w, err := laravel.NewWorker(b.q, newMapper(), rec.router(), laravel.WorkerConfig{
		Concurrency: 4, Sleep: 100 * time.Millisecond, Failed: runtime.NewInspector(b.engine).Failed(),
	})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	phpCtx, stopPHP := context.WithCancel(ctx)
	defer stopPHP()
	var stderrs [2]bytes.Buffer // one each: exec copies into it from a goroutine of its own
	var workers []*exec.Cmd
	for i := range stderrs {
		worker := b.command(phpCtx, "work.php", "default", "1", "60", "0", "0", "1")
		worker.Stderr = &stderrs[i]
		require.NoError(t, worker.Start())
		workers = append(workers, worker)
	}

	// Until both sides together have run every job (a deadline, not a
	// timing assertion: a lost job would otherwise hang the test).
	var phpRan, phpOnlyRan []string
	for {
		phpRan, phpOnlyRan = phpRan[:0], phpOnlyRan[:0]
		for _, line := range b.results(t, ctx) {
			if rest, ok := strings.CutPrefix(line, "ran|ChargeCardPhpOnly|"); ok {
				phpOnlyRan = append(phpOnlyRan, rest) // id|attempts
			} else if rest, ok := strings.CutPrefix(line, "ran|"); ok {
				phpRan = append(phpRan, rest[:strings.LastIndexByte(rest, '|')])
			}
		}
		rec.mu.Lock()
		total := rec.n + len(phpRan)
		rec.mu.Unlock()
		// Both done: every job run, and deleted (a PHP job reports
		// before its worker deletes it).
		sizes, err := b.q.Sizes(ctx, "default")
		require.NoError(t, err)
		if total >= 2*half && len(phpOnlyRan) >= phpOnly && sizes.Total() == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ran %d of %d jobs (Go %d)", total, 2*half, rec.n)
		case <-time.After(50 * time.Millisecond):
		}
	}
	stopPHP()
	for _, worker := range workers {
		_ = worker.Wait()
	}
	stop()
	require.NoError(t, <-done)

	runs := map[string]int{}
	for k, v := range rec.seen {
		runs[k] += v
	}
	for _, k := range phpRan {
		runs[k]++
	}
	for i := range 2 * half {
		require.Equal(t, 1, runs[wantJob(i)], "job %d: %s", i, wantJob(i))
	}
	require.Len(t, runs, 2*half)
	want := make([]string, phpOnly)
	for i := range want {
		want[i] = fmt.Sprintf("%d|1", i) // each once, on its first attempt: Go's pops left it untouched
	}
	require.ElementsMatch(t, want, phpOnlyRan, "the jobs no Go type is mapped to, run by PHP")
	n, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
	require.NoError(t, err)
	require.Zero(t, n, "Go failed none of them")
	t.Logf("Go ran %d jobs, Laravel's worker %d and %d PHP-only; Go left a PHP-only job first %d times", rec.n, len(phpRan), len(phpOnlyRan), w.Unmapped()[`App\Jobs\ChargeCardPhpOnly`])
}
