package dashboard_test

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// The cost of each page: how long it takes, how many bytes it sends and
// its idle refresh sends, and how many Redis commands it costs, on a
// Redis of its own filled with many jobs. TestPageCost measures and
// prints it (go test ./dashboard -run TestPageCost -v with
// JOBGEN_PAGE_COST=1); TestPageCommandBound and TestIdleRefreshIsSmall
// hold the bounds on a smaller fill in every run.

// costPages are the GET pages measured, one line each: a name, and the
// path, in which {job}, {bigjob}, {batch}, {task}, {workflow} and {last}
// stand for a small waiting job, a job of 1 MB, a batch, a task, a
// workflow of 202 steps and the last page of q00's ready list. A new page
// is one more line.
var costPages = []struct{ name, path string }{
	{"overview", ""},
	{"overview, last queues", "?from=100000"}, // past the end: the last window, with the fair groups
	{"workers", "workers"},
	{"queue", "queues/q00"},
	{"queue, last page", "queues/q00?page={last}"},
	{"queue, delayed", "queues/q00?state=delayed"},
	{"queue, reserved", "queues/q00?state=reserved"},
	{"queue, clear?", "queues/q00/clear"},
	{"failed", "failed"},
	{"failed, one queue", "failed?queue=q01"},
	{"failed, by tag", "failed?tag=big"},
	{"failed, flush?", "failed/flush?queue=q01"},
	{"find job", "jobs?id={job}"},
	{"job", "jobs/{job}?queue=q00"},
	{"job of 1 MB", "jobs/{bigjob}?queue=q00"},
	{"job, no queue", "jobs/{bigjob}"},
	{"job, cancel?", "jobs/{job}/cancel?queue=q00&attempt=0"},
	{"job, payload", "jobs/{bigjob}/payload?queue=q00"},
	{"search", "search"},
	{"search, by tag", "search?tag=big"},
	{"completed", "completed"},
	{"completed, by tag", "completed?queue=q01&tag=kept"},
	{"metrics", "metrics"},
	{"metrics, one queue", "metrics?queue=q01"},
	{"batches", "batches"},
	{"batches, older too", "batches?older=1"},
	{"batch", "batches/{batch}"},
	{"workflow", "workflows/{workflow}"},
	{"task", "tasks/{task}"},
	{"dispatch", "dispatch"},
	{"schedule", "schedule"},
	{"recent, completed", "recent?kind=completed"},
	{"recent, failed", "recent?kind=failed"},
	{"recent, pending", "recent?kind=pending"},
	{"history", "history?queue=q01"},
	{"history, 12h", "history?queue=q01&span=12h"},
	{"redis", "redis"},
	{"tags", "tags"},
	{"tags, one tag", "tags?tag=big"},
}

// costJob is a job of the fill: its Pad makes it big.
type costJob struct {
	Q     string
	Text  string
	Pad   string
	Group string `msgpack:"-"`
	Fail  bool
	Tags  []string `msgpack:"-"`
	Delay time.Duration
}

func (costJob) JobName() string { return "cost.Job" }
func (j costJob) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: j.Q, Tags: j.Tags, Delay: j.Delay}
}
func (j costJob) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

// groupedJob waits in a fair group.
type groupedJob struct{ costJob }

func (j groupedJob) JobGroup() string { return j.Group }

// costFill is what a fill made, for the pages' paths.
type costFill struct {
	queues                             []string
	job, bigjob, batch, task, workflow string
	last                               int
}

func (f costFill) path(p string) string {
	return strings.NewReplacer("{job}", f.job, "{bigjob}", f.bigjob, "{batch}", f.batch, "{task}", f.task,
		"{workflow}", f.workflow, "{last}", strconv.Itoa(f.last)).Replace(p)
}

// costSize is a fill: waiting jobs over queues, big of each queue's at
// its head and its tail of size pad bytes, finished and failed jobs,
// batches, and grouped jobs on the last queue over groups fair groups
// (20 if 0). partitions, if more than 1, splits q02 into that many
// partitions.
type costSize struct {
	waiting, queues, big, pad, finished, failed, batches, grouped, groups int
	partitions                                                            int
}

// costPartitioned is the queue a fill of costSize.partitions splits.
const costPartitioned = "q02"

// costBench is a dashboard on a Redis server of its own.
type costBench struct {
	ctx    context.Context
	engine *runtime.Engine
	rdb    *redis.Client
	srv    *httptest.Server
	raw    *http.Client // sends Accept-Encoding itself and keeps the body as sent
	fill   costFill
}

func newCostBench(t *testing.T, size costSize) *costBench {
	t.Helper()
	server := redistest.StartServer(t)
	ctx := context.Background()
	queues := make([]string, size.queues)
	keep := map[string]runtime.FinishedConfig{}
	for i := range queues {
		queues[i] = fmt.Sprintf("q%02d", i)
		keep[queues[i]] = runtime.FinishedConfig{MaxJobs: 10_000}
	}
	cfg := runtime.EngineConfig{Prefix: "cost", KeepFinished: keep}
	if size.partitions > 1 {
		cfg.Partitions = map[string]int{costPartitioned: size.partitions}
	}
	e, err := runtime.Open(ctx, "redis://"+server.Addr+"/0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	cb := &costBench{ctx: runtime.WithDispatcher(ctx, e), engine: e, rdb: redis.NewClient(&redis.Options{Addr: server.Addr})}
	t.Cleanup(func() { _ = cb.rdb.Close() })
	cb.fill = cb.fillWith(t, queues, size)
	cb.addWorkers(t, 5)

	s := schedule.New()
	for i := range 5 {
		s.Every(time.Duration(i+1)*time.Minute, costJob{Q: queues[0], Text: "tick"}).Name(fmt.Sprintf("every-%dm", i+1))
	}
	_, err = s.RunDue(cb.ctx, e, schedule.Config{})
	require.NoError(t, err)
	router := runtime.NewRouter()
	runtime.Register(router, "cost.Job", func(ctx context.Context, j costJob) error { return nil })
	h := dashboard.New(e, dashboard.Options{Logger: quiet, Schedule: s, Router: router})
	cb.srv = httptest.NewServer(h)
	t.Cleanup(cb.srv.Close)
	cb.raw = &http.Client{Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// A task: the retry of the last queue's failed jobs.
	form := url.Values{"queue": {queues[len(queues)-1]}}
	req, err := http.NewRequest(http.MethodPost, cb.srv.URL+"/failed/retry-all", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := cb.raw.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	cb.fill.task = path.Base(res.Header.Get("Location"))
	require.Eventually(t, func() bool { // its page stops refreshing when it is done
		_, page := cb.get(t, "tasks/"+cb.fill.task, map[string]string{"Accept-Encoding": "identity"})
		return strings.Contains(string(page), `data-refresh="0"`)
	}, time.Minute, 50*time.Millisecond)
	return cb
}

// fillWith dispatches the fill: on each queue, finished and failed jobs
// first (a worker runs them), then batches, grouped jobs, delayed jobs
// and the waiting jobs, the first and last big of them of size.pad.
func (cb *costBench) fillWith(t *testing.T, queues []string, size costSize) costFill {
	t.Helper()
	ctx := cb.ctx
	pad := strings.Repeat("x", size.pad)
	f := costFill{queues: queues}
	var done []costJob
	for _, q := range queues {
		for i := range size.finished {
			done = append(done, costJob{Q: q, Text: "done", Tags: []string{"kept", "n:" + strconv.Itoa(i%7)}})
		}
		for i := range size.failed {
			j := costJob{Q: q, Text: "fails", Fail: true, Tags: []string{"failing"}}
			if i < 5 {
				j.Pad, j.Tags = pad, []string{"failing", "big"}
			}
			done = append(done, j)
		}
	}
	for chunk := range slices.Chunk(done, 500) {
		_, err := runtime.DispatchMany(ctx, chunk)
		require.NoError(t, err)
	}
	r := runtime.NewRouter()
	runtime.Register(r, "cost.Job", func(ctx context.Context, j costJob) error {
		if j.Fail {
			return errors.New("refused: " + j.Text)
		}
		return nil
	})
	w, err := runtime.NewWorker(cb.engine, r, runtime.WorkerConfig{Queues: queues, StopWhenEmpty: true, Tries: 1,
		Concurrency: 16, Sleep: 10 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))

	for i := range size.batches {
		jobs := make([]runtime.Job, 10)
		for k := range jobs {
			jobs[k] = costJob{Q: queues[i%len(queues)], Text: "in a batch"}
		}
		id, err := runtime.NewBatch(jobs...).Name("batch " + strconv.Itoa(i)).Dispatch(ctx)
		require.NoError(t, err)
		f.batch = id
	}
	// A workflow of 202 steps, waiting on its root: a fan-out and a
	// fan-in.
	wf := runtime.NewWorkflow()
	root := runtime.AddStep(wf, costJob{Q: queues[0], Text: "root"})
	lines := make([]costJob, 200)
	for i := range lines {
		lines[i] = costJob{Q: queues[0], Text: "line"}
	}
	var parents []runtime.Parent
	for _, s := range runtime.AddSteps(wf, lines, runtime.After(root)) {
		parents = append(parents, s)
	}
	runtime.AddStep(wf, costJob{Q: queues[0], Text: "sum"}, runtime.After(parents...))
	f.workflow, err = wf.Dispatch(ctx)
	require.NoError(t, err)
	var grouped []groupedJob
	groups := cmp.Or(size.groups, 20)
	for i := range size.grouped {
		grouped = append(grouped, groupedJob{costJob{Q: queues[len(queues)-1], Text: "grouped", Group: "tenant-" + strconv.Itoa(i%groups)}})
	}
	for chunk := range slices.Chunk(grouped, 500) {
		_, err := runtime.DispatchMany(ctx, chunk)
		require.NoError(t, err)
	}
	per := size.waiting / len(queues)
	for _, q := range queues {
		delayed := make([]costJob, 50)
		for i := range delayed {
			delayed[i] = costJob{Q: q, Text: "later", Delay: time.Hour}
		}
		_, err := runtime.DispatchMany(ctx, delayed)
		require.NoError(t, err)
		for from := 0; from < per; {
			big := from < size.big || from >= per-size.big
			n := 1000
			if big {
				n = 10
			}
			n = min(n, per-from)
			if !big {
				n = min(n, max(per-size.big-from, 1))
			}
			jobs := make([]costJob, n)
			for i := range jobs {
				jobs[i] = costJob{Q: q, Text: "waits " + strconv.Itoa(from+i)}
				if big {
					jobs[i].Pad, jobs[i].Tags = pad, []string{"big"}
				}
			}
			ids, err := runtime.DispatchMany(ctx, jobs)
			require.NoError(t, err)
			if q == queues[0] && big && f.bigjob == "" {
				f.bigjob = ids[0]
			}
			if q == queues[0] && !big && f.job == "" {
				f.job = ids[0]
			}
			from += n
		}
	}
	s, err := runtime.NewInspector(cb.engine).Sizes(ctx, queues[0])
	require.NoError(t, err)
	f.last = int((s.Ready + 49) / 50)
	return f
}

// addWorkers records n workers as live for an hour, as a worker records
// itself (runtime/monitor.go), each running a job: live workers would
// add their own commands to the counts.
func (cb *costBench) addWorkers(t *testing.T, n int) {
	t.Helper()
	k := keyspace.New("cost")
	until := time.Now().Add(time.Hour)
	for i := range n {
		id := fmt.Sprintf("w%d", i)
		info := runtime.WorkerInfo{ID: id, Name: "worker-" + strconv.Itoa(i), Host: "host", PID: 100 + i, Queues: cb.fill.queues,
			Concurrency: 8, StartedAt: time.Now(), SeenAt: time.Now(),
			Running: []runtime.RunningJob{{Queue: cb.fill.queues[0], ID: cb.fill.job, Name: "cost.Job", StartedAt: time.Now()}}}
		rec, err := json.Marshal(info)
		require.NoError(t, err)
		require.NoError(t, cb.rdb.Set(cb.ctx, k.Worker(id), rec, time.Hour).Err())
		require.NoError(t, cb.rdb.ZAdd(cb.ctx, k.Workers(), redis.Z{Score: float64(until.UnixMilli()), Member: id}).Err())
	}
}

// pageCost is what one page cost.
type pageCost struct {
	status          int
	ms              float64 // median
	bytes           int     // as sent, gzipped
	refresh         string  // the idle refresh: "304", "200, 812 B", or "none"
	refreshBytes    int
	first, commands int64 // Redis commands of the first render, and of one after it
}

// get fetches path as a browser does, and returns the response and its
// body as sent.
func (cb *costBench) get(t testing.TB, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, cb.srv.URL+"/"+path, nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := cb.raw.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, body
}

// commands runs fn and returns how many Redis commands the server ran
// meanwhile, those inside scripts included, less the INFO that reads
// them and the CONFIG RESETSTAT before it.
func (cb *costBench) commands(t testing.TB, fn func()) int64 {
	t.Helper()
	require.NoError(t, cb.rdb.ConfigResetStat(cb.ctx).Err())
	fn()
	info, err := cb.rdb.Info(cb.ctx, "commandstats").Result()
	require.NoError(t, err)
	var n int64
	var by []string
	calls := regexp.MustCompile(`^cmdstat_([^:]+):calls=(\d+)`)
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		m := calls.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		c, _ := strconv.ParseInt(m[2], 10, 64)
		if m[1] == "info" || m[1] == "config|resetstat" {
			c--
		}
		n += c
		if c > 0 {
			by = append(by, m[1]+"="+strconv.FormatInt(c, 10))
		}
	}
	if os.Getenv("JOBGEN_PAGE_COST_DETAIL") != "" {
		t.Logf("commands: %d: %s", n, strings.Join(by, " "))
	}
	return n
}

var dataRefresh = regexp.MustCompile(`data-refresh="(\d+)"`)

// measure measures one page: its Redis commands on a first render and
// on the next, and the median time of runs more. live is whether the
// page refreshes itself.
func (cb *costBench) measure(t testing.TB, path string, runs int) (c pageCost, live bool) {
	t.Helper()
	var res *http.Response
	var body []byte
	c.first = cb.commands(t, func() { res, body = cb.get(t, path, nil) })
	c.status, c.bytes = res.StatusCode, len(body)
	c.commands = cb.commands(t, func() { cb.get(t, path, nil) })
	times := make([]float64, runs)
	for i := range times {
		start := time.Now()
		cb.get(t, path, nil)
		times[i] = float64(time.Since(start).Microseconds()) / 1000
	}
	slices.Sort(times)
	if runs > 0 {
		c.ms = times[len(times)/2]
	}
	c.refresh = "none"
	m := dataRefresh.FindSubmatch(gunzipped(t, res, body))
	return c, m != nil && string(m[1]) != "0"
}

// idleRefreshes fills in the idle refresh of each live page of costs,
// as live.js sends it: with the ETag of the refresh before, a refresh
// period (2 s) later, so that the texts saying how long ago something
// was have moved on. A refresh that changed is tried again once: the
// charts move when a minute begins.
func (cb *costBench) idleRefreshes(t testing.TB, paths []string, costs []pageCost, live []bool) {
	t.Helper()
	hdr := map[string]string{"X-Dashboard-Live": "1"}
	for try := 0; try < 2; try++ {
		etags := make([]string, len(paths))
		for i, p := range paths {
			if live[i] && (try == 0 || costs[i].refresh != "304") {
				res, _ := cb.get(t, p, hdr)
				etags[i] = res.Header.Get("ETag")
			}
		}
		time.Sleep(2 * time.Second)
		for i, p := range paths {
			if etags[i] == "" {
				continue
			}
			res, b := cb.get(t, p, map[string]string{"X-Dashboard-Live": "1", "If-None-Match": etags[i]})
			costs[i].refreshBytes = len(b)
			costs[i].refresh = fmt.Sprintf("%d, %d B", res.StatusCode, len(b))
			if res.StatusCode == http.StatusNotModified {
				costs[i].refresh = "304"
			}
		}
	}
}

// measureAll measures every page of costPages.
func (cb *costBench) measureAll(t testing.TB, runs int) []pageCost {
	t.Helper()
	costs := make([]pageCost, len(costPages))
	live := make([]bool, len(costPages))
	paths := make([]string, len(costPages))
	for i, p := range costPages {
		paths[i] = cb.fill.path(p.path)
		if os.Getenv("JOBGEN_PAGE_COST_DETAIL") != "" {
			t.Log(p.name)
		}
		costs[i], live[i] = cb.measure(t, paths[i], runs)
	}
	cb.idleRefreshes(t, paths, costs, live)
	return costs
}

func gunzipped(t testing.TB, res *http.Response, body []byte) []byte {
	t.Helper()
	if res.Header.Get("Content-Encoding") != "gzip" {
		return body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	page, err := io.ReadAll(zr)
	require.NoError(t, err)
	return page
}

// TestPageCost prints each page's cost on a Redis of 100,000 waiting
// jobs (JOBGEN_PAGE_COST_JOBS) over ten queues (JOBGEN_PAGE_COST_QUEUES).
// 100,000 jobs of 1 MB do not fit in memory: the first and last JOBGEN_PAGE_COST_BIG (50) of
// each queue, what its first and last pages show, and five failed jobs
// of each queue are of 1 MB; the others are small.
func TestPageCost(t *testing.T) {
	if os.Getenv("JOBGEN_PAGE_COST") == "" {
		t.Skip("set JOBGEN_PAGE_COST=1 to measure the pages' cost (JOBGEN_PAGE_COST_JOBS, JOBGEN_PAGE_COST_QUEUES, JOBGEN_PAGE_COST_BIG)")
	}
	size := costSize{waiting: envInt("JOBGEN_PAGE_COST_JOBS", 100_000), queues: envInt("JOBGEN_PAGE_COST_QUEUES", 10), big: envInt("JOBGEN_PAGE_COST_BIG", 50), pad: 1<<20 - 1024, // 1 MB with its envelope, under the default cap
		finished: 300, failed: 60, batches: 30, grouped: 500}
	start := time.Now()
	cb := newCostBench(t, size)
	t.Logf("filled in %v: %d waiting jobs over %d queues, %d of 1 MB at the head and tail of each", time.Since(start).Round(time.Second), size.waiting, size.queues, size.big)
	var out strings.Builder
	out.WriteString("| page | path | status | ms (median of 5) | bytes (gzip) | idle refresh | Redis commands (first, then) |\n|---|---|---|--:|--:|---|--:|\n")
	costs := cb.measureAll(t, 5)
	for i, p := range costPages {
		c := costs[i]
		fmt.Fprintf(&out, "| %s | `/%s` | %d | %.1f | %d | %s | %d, %d |\n", p.name, strings.ReplaceAll(p.path, "|", `\|`), c.status, c.ms, c.bytes, c.refresh, c.first, c.commands)
	}
	fmt.Println(out.String())
}

// costBound is the most Redis commands a page may cost.
const costBound = 100

// Every page costs at most costBound Redis commands, on a first render
// and on the next, with thirty queues (the pages across queues read a
// window of them), and its idle refresh is a 304 or under 1 KB. The
// fill is small (3,000 jobs, of 64 KB at the lists' ends), so that it
// runs with the other tests; the commands do not depend on the number
// of jobs.
func TestPagesStayCheap(t *testing.T) {
	t.Parallel()
	size := costSize{waiting: 3000, queues: 30, big: 3, pad: 64 << 10, finished: 20, failed: 12, batches: 45, grouped: 200}
	cb := newCostBench(t, size)
	costs := cb.measureAll(t, 0)
	requireCheap(t, costs)
}

// Every page costs at most costBound Redis commands, whatever the number
// of partitions of a queue and of fair groups: TestPagesStayCheap's thirty queues, one of them
// (q02) split into 16 partitions and the last (q29) holding 1,500 jobs
// waiting in 250 fair groups, past what one read of the groups' heads
// takes. The pages that read each partition of a queue (the overview,
// the search, the look for older batches, the metrics, the Recent page)
// read a window of partitions, and the overview, past 1,000 jobs in
// groups, the heads of the groups among the first 1,000.
func TestPagesStayCheapWithPartitionsAndGroups(t *testing.T) {
	t.Parallel()
	size := costSize{waiting: 3000, queues: 30, big: 3, pad: 64 << 10, finished: 20, failed: 12, batches: 45,
		grouped: 1500, groups: 250, partitions: 16}
	cb := newCostBench(t, size)
	st, err := runtime.NewInspector(cb.engine).States(cb.ctx, []string{"q29"})
	require.NoError(t, err)
	require.EqualValues(t, 1500, st["q29"].Grouped, "the jobs wait in their groups")
	costs := cb.measureAll(t, 0)
	requireCheap(t, costs)

	// The overview's windows are of ten partitions: q02's are read over
	// three of them, and each says which it read.
	_, page := cb.get(t, "", map[string]string{"Accept-Encoding": "identity"})
	require.Contains(t, string(page), "q02</a> <span class=\"muted\">(partitions 1–8 of 16)</span>")
	require.Contains(t, string(page), "queues 1–3 of 30, by name (q02: partitions 1–8 of 16)")
	_, page = cb.get(t, "?from=10", map[string]string{"Accept-Encoding": "identity"})
	require.Contains(t, string(page), "q02</a> <span class=\"muted\">(partitions 9–16 of 16)</span>")
	require.Contains(t, string(page), "queues 3–5 of 30, by name (q02: partitions 9–16 of 16)")
	// The other pages that read each partition read a window of them too,
	// and say which partitions of q02 they read.
	for path, says := range map[string]string{
		"search?tag=big":      "q02: partitions 1–3 of 16",
		"batches?older=1":     "q02: partition 1 of 16",
		"metrics":             "Queues 1–5 of 30, by name;", // q02 whole
		"recent?kind=pending": "q02: partitions 1–8 of 16",
	} {
		_, page = cb.get(t, path, map[string]string{"Accept-Encoding": "identity"})
		require.Contains(t, string(page), says, path)
	}
	// The last window holds q29, whose wait is a bound: more than 1,000
	// jobs wait in its groups.
	_, page = cb.get(t, "?from=100000", map[string]string{"Accept-Encoding": "identity"})
	require.Contains(t, string(page), "at least: not every fair group's head was read")
}

// requireCheap checks each page's cost of costs (of costPages): at most
// costBound commands, on a first render and on the next, and an idle
// refresh of a 304 or under 1 KB.
func requireCheap(t *testing.T, costs []pageCost) {
	t.Helper()
	for i, p := range costPages {
		c := costs[i]
		t.Logf("%s: %d, %d commands; idle refresh %s", p.name, c.first, c.commands, c.refresh)
		// assert, not require: a failure names every page over.
		assert.Less(t, c.status, 500, p.name)
		assert.True(t, c.refresh == "none" || c.refresh == "304" || c.refreshBytes < 1024, "%s: idle refresh %s", p.name, c.refresh)
		assert.LessOrEqual(t, c.first, int64(costBound), "%s: Redis commands of a first render", p.name)
		assert.LessOrEqual(t, c.commands, int64(costBound), "%s: Redis commands of a render", p.name)
	}
	require.Equal(t, "304", costs[0].refresh, "the overview answers 304 when nothing changed")
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
