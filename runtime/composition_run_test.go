package runtime_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/failedsql"
	"github.com/jobgen/jobgen/internal/jobopt"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// How the composition test runs its cells: many at once, each with a
// queue, a router and workers of its own on the engines its backend's
// cells share, gathering what it saw into a compObs that TestComposition
// then checks cell by cell.

// compCellTimeout bounds one cell's run: a bound on a cell that hangs,
// not a speed target. A cell ends in a few seconds; run alone on embedded
// under -race, an outbox cell with a group limit took 2.6 to 4.1 s, and
// in a full CI run on a loaded machine one outran 15 s.
const compCellTimeout = time.Minute

// compParallel is how many cells of a backend run at once.
const compParallel = 32

// compJob is the job of every cell. Its options are the cell's; its
// fields say which of the cell's dispatches it is.
type compJob struct {
	Cell string
	// N is slot*10 + round: slot 1 is the second job of a group, round
	// 1 to 3 a dispatch of a burst.
	N int
	// Link is 1 for the first link of a chain, which leads to the
	// cell's job.
	Link int
	// Copy marks a copy the handler dispatches, to find a unique lock.
	Copy bool
	// Secret is what an encrypted job's payload must hide.
	Secret string
	// Key is the job's debounce key and unique ID.
	Key   string
	Group string
	opts  runtime.JobOptions
}

func (compJob) JobName() string                  { return "comp.Job" }
func (j compJob) JobOptions() runtime.JobOptions { return j.opts }
func (j compJob) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }
func (j compJob) JobGroup() string               { return j.Group }
func (j compJob) DebounceKey() string            { return j.Key }
func (j compJob) UniqueID() string               { return j.Key }

// compEvent is the event of the Listener path, carrying the cell's job.
type compEvent struct{ Job compJob }

// compListener is the listener of the Listener path. A listener's
// options are its type's, read from its zero value, so the cell that
// fires takes compListenerMu and sets compListenerOpts around Fire; a
// router registers it holding the lock too, while they are zero.
type compListener struct{}

var (
	compListenerMu   sync.Mutex
	compListenerOpts runtime.JobOptions
)

func (compListener) ListenerName() string                { return "comp.Listener" }
func (compListener) ListenerOptions() runtime.JobOptions { return compListenerOpts }

// compBackend is what the cells of one backend share: an engine, the
// engine of the other connection (on a key prefix of its own), the key
// ring, and the outbox's table and relay.
type compBackend struct {
	be       redistest.Backend
	main     *runtime.Engine
	conn     *runtime.Engine
	connName string
	keys     *runtime.KeyRing
	table    string // the outbox table; "" without PostgreSQL
	db       *sql.DB
	// mainSQL and connSQL are main and conn with a failed store in
	// PostgreSQL (FailedRetrySQL); nil without PostgreSQL.
	mainSQL, connSQL *runtime.Engine
}

func newCompBackend(t *testing.T, be redistest.Backend) *compBackend {
	t.Helper()
	ring, err := runtime.NewKeyRing(runtime.Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")})
	require.NoError(t, err)
	b := &compBackend{be: be, keys: ring}
	if u := os.Getenv(pgtest.EnvURL); u != "" {
		db, err := sql.Open("postgres", u)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		b.db, b.table = db, pgtest.Table(t, db)
		require.NoError(t, runtime.MigrateOutbox(context.Background(), db, b.table))
	}
	b.main = b.open(t, redistest.Prefix(t), nil)
	b.conn = b.open(t, redistest.Prefix(t), nil)
	if b.db != nil {
		store, err := failedsql.New(failedsql.Config{DB: b.db, Table: pgtest.Table(t, b.db)})
		require.NoError(t, err)
		require.NoError(t, store.Migrate(context.Background()))
		b.mainSQL = b.open(t, b.main.Config().Prefix, store)
		b.connSQL = b.open(t, b.conn.Config().Prefix, store)
	}
	b.connName = "comp-" + b.main.Config().Prefix
	runtime.SetConnection(b.connName, b.conn)
	if b.db != nil {
		relay, err := outbox.NewRelay(b.main, outbox.RelayConfig{DB: b.db, Poll: 10 * time.Millisecond,
			Connections: map[string]*runtime.Engine{b.connName: b.conn}, Logger: quiet})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- relay.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return b
}

// open opens an engine on the backend under prefix, closed when the
// test ends. Its client's pool has room for the idle workers of every
// cell running at once, each of which holds a connection in a blocking
// wait.
func (b *compBackend) open(t *testing.T, prefix string, failed runtime.FailedBackend) *runtime.Engine {
	t.Helper()
	rdb, closeClient, err := runtime.OpenClient(b.be.URL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = closeClient() })
	const pool = 8 * compParallel
	switch c := rdb.(type) {
	case *redis.Client:
		o := c.Options()
		o.PoolSize = pool
		rdb = redis.NewClient(o)
	case *redis.ClusterClient:
		o := c.Options()
		o.PoolSize = pool
		rdb = redis.NewClusterClient(o)
	default:
		t.Fatalf("a client of type %T", rdb)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	e, err := runtime.NewEngine(context.Background(), rdb, runtime.EngineConfig{Prefix: prefix, Keys: b.keys, OutboxTable: b.table, FailedStore: failed})
	require.NoError(t, err)
	return e
}

// cells builds the table's cells: every path with every row.
func (b *compBackend) cells() []*compCell {
	var cells []*compCell
	for _, p := range jobopt.Paths {
		for _, row := range compRows() {
			cells = append(cells, newCompCell(b, p, row, compWindow))
		}
	}
	return cells
}

// runAll runs the cells, compParallel at a time, in the background;
// each closes its done channel when it has finished.
func (b *compBackend) runAll(cells []*compCell) {
	sem := make(chan struct{}, compParallel)
	for _, c := range cells {
		go func() {
			defer close(c.done)
			sem <- struct{}{}
			defer func() { <-sem }()
			c.obs.harness = c.run()
			// A loaded machine may take longer than a debounce window to
			// send a burst: the cell runs again, on a queue of its own,
			// with a window twice as long, up to twice.
			for window := 2 * compWindow; errors.Is(c.obs.harness, errCompTooSlow) && window <= 4*compWindow; window *= 2 {
				done := c.done
				*c = *newCompCell(b, c.path, c.row, window)
				c.done = done
				c.obs.harness = c.run()
			}
		}()
	}
}

// errCompTooSlow says a cell's burst took longer to send than its
// debounce window.
var errCompTooSlow = errors.New("this machine is too slow for the cell")

// compCell is one cell of the table: a path and a row.
type compCell struct {
	b       *compBackend
	path    jobopt.Path
	row     compRow
	outcome jobopt.Outcome
	queue   string
	opts    runtime.JobOptions // of every job of the cell
	group   string             // "" unless the row puts the jobs in a group
	slots   int                // jobs per dispatch: 2 in a group, else 1
	rounds  int                // dispatches of each: 3 in a burst, else 1
	// debounced: of a burst, only the last dispatch runs.
	debounced bool
	// window is the cell's debounce window: compWindow, or longer when
	// the machine was too slow to send a burst within it.
	window time.Duration
	// fails is the error the jobs end with in the failed store, nil
	// for a success.
	fails error
	// retry: the jobs fail their first run, and are retried from the
	// failed store (FailedRetry).
	retry bool
	// conn: the jobs go to the engine of the other connection.
	conn bool
	// at is the time the drivers give At, for a row with At: compDelay
	// after the first dispatch.
	at time.Time
	// workflows are the IDs of the workflows the WorkflowStep path
	// dispatched.
	workflows []string

	main       *runtime.Engine
	connEngine *runtime.Engine // of the other connection, if the jobs go there
	router     *runtime.Router
	ctx        context.Context
	done       chan struct{}

	mu         sync.Mutex
	retried    bool // the failed store's retry has run
	running    int
	maxRunning int
	linkEnd    map[int]time.Time // when each job's first link ended (ChainLink)
	obs        compObs
}

// compObs is what a cell saw.
type compObs struct {
	harness  error       // the test's own machinery failed
	sendErr  error       // the path's error
	rounds   [][]string  // the IDs each round of dispatches returned
	dues     []time.Time // of a debounced burst's job, after its first and second dispatches
	t0       time.Time   // just before the first dispatch
	runs     []*compRun
	failed   []runtime.FailedJob
	retried  []runtime.JobState // the states of the jobs just retried
	timedOut bool
}

// compRun is one attempt of one of the cell's jobs, after any first
// run that a retry follows.
type compRun struct {
	ctx        context.Context
	job        compJob
	info       runtime.JobInfo
	start, end time.Time
	deadline   time.Duration // from start to the end of its context
	payload    []byte        // as stored in Redis while it ran
	env        *runtime.Envelope
	envErr     error
	groups     runtime.QueueGroups
	inGroup    bool  // Inspector.Groups showed its group running
	copyErr    error // of a copy's dispatch, for a unique job
	err        error // what the handler returned
}

func newCompCell(b *compBackend, p jobopt.Path, row compRow, window time.Duration) *compCell {
	c := &compCell{b: b, path: p, row: row, outcome: jobopt.ExpectAll(row.options, p.Name),
		queue: "comp-" + p.Name + "-" + row.name, slots: 1, rounds: 1, done: make(chan struct{}), linkEnd: map[int]time.Time{},
		window: window}
	if window != compWindow {
		c.queue += "-" + window.String()
	}
	c.retry = p.Name == "FailedRetry" || p.Name == "FailedRetrySQL"
	if row.has("GroupLimit") {
		c.group, c.slots = c.queue+"-group", 2
	}
	if row.has("Debounce") || row.has("DebounceMaxWait") || p.Name == "Debounced" {
		c.rounds = 3
		// A retry's first run was debounced at its dispatch.
		c.debounced = c.retry || jobopt.Expect("Debounce", p.Name).Effect == jobopt.Works
	}
	c.conn = row.has("Connection") && jobopt.Expect("Connection", p.Name).Effect == jobopt.Works
	c.main = b.main
	if c.conn {
		c.connEngine = b.conn
	}
	if p.Name == "FailedRetrySQL" {
		c.main, c.connEngine = b.mainSQL, b.connSQL
	}
	c.opts.Queue = c.queue
	for _, name := range row.options {
		a := compAspects[name]
		if a.set != nil {
			a.set(c, &c.opts)
		}
		if a.fails != nil {
			c.fails = a.fails
		}
	}
	return c
}

// job returns the job of slot and round.
func (c *compCell) job(slot, round int) compJob {
	n := slot*10 + round
	return compJob{Cell: c.queue, N: n, Secret: compSecret(c, n), Key: fmt.Sprintf("%s-%d", c.queue, slot), Group: c.group, opts: c.opts}
}

func compSecret(c *compCell, n int) string { return fmt.Sprintf("secret of %s %d", c.queue, n) }

// expected returns the N of each job that should run, sorted.
func (c *compCell) expected() []int {
	var ns []int
	for s := range c.slots {
		for r := 1; r <= c.rounds; r++ {
			if c.debounced && r < c.rounds {
				continue
			}
			ns = append(ns, s*10+r)
		}
	}
	return ns
}

// home is the engine the cell's jobs go to.
func (c *compCell) home() *runtime.Engine {
	if c.conn {
		return c.connEngine
	}
	return c.main
}

// returnsIDs reports whether the path returns the IDs of the jobs in
// Redis.
func (c *compCell) returnsIDs() bool {
	switch c.path.Name {
	case "Dispatch", "DispatchMany", "PendingMany", "Debounced", "FailedRetry", "FailedRetrySQL", "PushMany":
		return true
	}
	return false
}

// run runs the cell: it dispatches its jobs, starts its workers, waits
// for the jobs to end and gathers what it saw.
// It returns an error of its own machinery, not of what it tests.
func (c *compCell) run() error {
	if c.outcome.Effect == jobopt.NoWay {
		return nil
	}
	if (c.path.Name == "DispatchTx" || c.path.Name == "DispatchManyTx" || c.path.Name == "FailedRetrySQL") && c.b.db == nil {
		return nil // check skips it
	}
	c.router = runtime.NewRouter()
	runtime.Register(c.router, "comp.Job", c.handle)
	compListenerMu.Lock()
	runtime.RegisterListener[compListener](c.router, func(ctx context.Context, e compEvent) error { return c.handle(ctx, e.Job) })
	compListenerMu.Unlock()
	c.ctx = runtime.HandlerContext(context.Background(), c.main, c.router)

	// The workers start once the jobs are dispatched, so that a burst's
	// dispatches go out close together.
	if err := c.send(); err != nil {
		return err
	}
	stop, err := c.startWorkers()
	if err != nil {
		return err
	}
	defer func() { stop() }()
	if c.obs.sendErr != nil {
		time.Sleep(compRunFor) // for a job pushed before the refusal to show
		return nil
	}
	deadline := time.Now().Add(compCellTimeout)
	ended := true
	if c.retry {
		ended = c.waitFor(deadline, func() bool { return c.failedCount() >= len(c.expected()) })
		if ended {
			stop()
			if err := c.retryFailed(); err != nil {
				return err
			}
			if stop, err = c.startWorkers(); err != nil {
				return err
			}
		}
	}
	if ended && c.waitFor(deadline, c.ended) {
		time.Sleep(compRunFor) // for a job that should not run to show
	}
	stop()
	c.obs.failed, err = runtime.NewInspector(c.home()).Failed().List(context.Background(), c.queue, 0, 100)
	return err
}

// send dispatches the cell's rounds through its path. A burst's first
// two dispatches are apart, and the due time of its job is read after
// each.
func (c *compCell) send() error {
	c.obs.t0 = time.Now()
	if c.row.has("At") {
		c.at = c.obs.t0.Add(compDelay)
	}
	for round := 1; round <= c.rounds; round++ {
		jobs := make([]compJob, c.slots)
		for s := range jobs {
			jobs[s] = c.job(s, round)
		}
		ids, err := compDrivers[c.path.Name](c, jobs)
		if err != nil {
			c.obs.sendErr = err
			return nil
		}
		c.obs.rounds = append(c.obs.rounds, ids)
		if c.debounced && round > 1 && time.Since(c.obs.t0) >= c.window {
			// Its first job may have run: what follows would say the
			// burst was not debounced, which is not what happened.
			return fmt.Errorf("%w: dispatch %d of a burst came %v after the first, past the debounce window (%v)", errCompTooSlow, round, time.Since(c.obs.t0), c.window)
		}
		if c.rounds > 1 && round < 3 {
			if c.debounced && c.returnsIDs() {
				job, ok, err := runtime.NewInspector(c.home()).FindJob(context.Background(), c.queue, ids[0])
				if err != nil {
					return err
				}
				if ok {
					c.obs.dues = append(c.obs.dues, job.Due)
				}
			}
			if round == 1 {
				time.Sleep(30 * time.Millisecond) // for the second to move the due time on
			}
		}
	}
	return nil
}

// startWorkers starts the cell's workers: one on its engine, and one on
// the other connection's when its jobs go there. The function returned
// stops them, and may be called again.
func (c *compCell) startWorkers() (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start := func(name string, e *runtime.Engine) error {
		cfg := runtime.WorkerConfig{Name: name, Queues: []string{c.queue}, Concurrency: 4,
			Grace: 2 * time.Second, MonitorEvery: -1, Logger: quiet}
		for _, o := range c.row.options {
			if w := compAspects[o].worker; w != nil {
				w(&cfg)
			}
		}
		w, err := runtime.NewWorker(e, c.router, cfg)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = w.Run(ctx) }()
		return nil
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	if err := start("main", c.main); err != nil {
		stop()
		return nil, err
	}
	if c.connEngine != nil {
		if err := start("conn", c.connEngine); err != nil {
			stop()
			return nil, err
		}
	}
	return stop, nil
}

// waitFor waits until cond holds, or deadline; it reports whether cond
// held.
func (c *compCell) waitFor(deadline time.Time, cond func() bool) bool {
	for !cond() {
		if time.Now().After(deadline) {
			c.obs.timedOut = true
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// ended reports whether the cell's jobs have ended: each expected one
// succeeded, or, for a cell whose jobs fail, they are in the failed
// store. A job failed when it should not have ends the cell too.
func (c *compCell) ended() bool {
	n := c.failedCount()
	if c.fails != nil {
		return n >= len(c.expected())
	}
	if n > 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, want := range c.expected() {
		if !slices.ContainsFunc(c.obs.runs, func(r *compRun) bool { return r.job.N == want && r.err == nil }) {
			return false
		}
	}
	return true
}

func (c *compCell) failedCount() int {
	n, err := runtime.NewInspector(c.home()).Failed().Count(context.Background(), c.queue)
	if err != nil {
		return 0
	}
	return int(n)
}

// retryFailed retries the cell's failed jobs, with no worker running,
// and notes where each one is at once.
func (c *compCell) retryFailed() error {
	ctx := context.Background()
	in := runtime.NewInspector(c.home())
	failed, err := in.Failed().List(ctx, c.queue, 0, 100)
	if err != nil {
		return err
	}
	var ids []string
	for _, f := range failed {
		ids = append(ids, f.ID)
	}
	c.mu.Lock()
	c.retried = true
	c.mu.Unlock()
	done, err := in.Failed().Retry(ctx, c.queue, ids...)
	if err != nil {
		return err
	}
	if len(done) != len(ids) {
		return fmt.Errorf("retried %v of %v", done, ids)
	}
	for _, id := range done {
		job, ok, err := in.FindJob(ctx, c.queue, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("retried job %s is not in queue %s", id, c.queue)
		}
		c.obs.retried = append(c.obs.retried, job.State)
	}
	return nil
}

var errFirstRun = errors.New("the first run fails, for the failed store's retry")

// handle is the cell's handler: it notes what the job's attempt sees,
// and does what the cell's options ask.
func (c *compCell) handle(ctx context.Context, job compJob) error {
	if job.Copy {
		return nil
	}
	if job.Link == 1 {
		c.mu.Lock()
		c.linkEnd[job.N] = time.Now()
		c.mu.Unlock()
		return nil
	}
	c.mu.Lock()
	first := c.retry && !c.retried
	c.mu.Unlock()
	if first {
		return runtime.FailRequest(errFirstRun)
	}
	info, _ := runtime.JobInfoFrom(ctx)
	r := &compRun{ctx: ctx, job: job, info: info, start: time.Now()}
	c.mu.Lock()
	c.running++
	c.maxRunning = max(c.maxRunning, c.running)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running--
		c.mu.Unlock()
	}()
	if d, ok := ctx.Deadline(); ok {
		r.deadline = d.Sub(r.start)
	}
	e := c.main
	if info.Worker == "conn" {
		e = c.connEngine
	}
	in := runtime.NewInspector(e)
	if found, ok, err := in.FindJob(ctx, info.Queue, info.ID); err != nil || !ok {
		r.envErr = fmt.Errorf("find running job %s: found %v, %v", info.ID, ok, err)
	} else {
		r.payload = found.Payload
		r.env, r.envErr = runtime.DecodeEnvelope(found.Queue, found.ID, found.Payload)
	}
	if c.group != "" {
		gs, err := in.Groups(ctx, info.Queue, 10)
		r.groups = gs
		r.inGroup = err == nil && slices.ContainsFunc(gs.Groups, func(g runtime.GroupInfo) bool { return g.Name == c.group && g.Running > 0 })
	}
	if c.row.has("UniqueFor") {
		cp := job
		cp.Copy, cp.opts = true, c.opts // the body carries no options
		_, r.copyErr = e.Dispatch(ctx, runtime.NewPendingDispatch(cp))
	}
	for _, name := range c.row.options {
		if h := compAspects[name].handle; h != nil && r.err == nil {
			r.err = h(c, r)
		}
	}
	r.end = time.Now()
	c.mu.Lock()
	c.obs.runs = append(c.obs.runs, r)
	c.mu.Unlock()
	return r.err
}

// runs returns the attempts the cell saw, in the order they ended.
func (c *compCell) runs() []*compRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.obs.runs)
}

// runsOf returns the attempts of job n, first first.
func (c *compCell) runsOf(n int) []*compRun {
	var out []*compRun
	for _, r := range c.runs() {
		if r.job.N == n {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *compRun) int { return a.info.Attempt - b.info.Attempt })
	return out
}

// attempts returns the attempt numbers job n ran with.
func (c *compCell) attempts(n int) []int {
	var out []int
	for _, r := range c.runsOf(n) {
		out = append(out, r.info.Attempt)
	}
	return out
}

// ns returns the jobs that ran, by N, sorted.
func (c *compCell) ns() []int {
	var out []int
	for _, r := range c.runs() {
		if !slices.Contains(out, r.job.N) {
			out = append(out, r.job.N)
		}
	}
	slices.Sort(out)
	return out
}

// failedEnvs decodes the envelopes of the cell's jobs in the failed
// store.
func (c *compCell) failedEnvs(t *testing.T) []*runtime.Envelope {
	t.Helper()
	var out []*runtime.Envelope
	for _, f := range c.obs.failed {
		env, err := runtime.DecodeEnvelope(f.Queue, f.ID, f.Payload)
		require.NoError(t, err)
		out = append(out, env)
	}
	return out
}

// delayFrom returns when job n's delay started: its dispatch, or for a
// chain's link the end of the link before it.
func (c *compCell) delayFrom(n int) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if end, ok := c.linkEnd[n]; ok {
		return end
	}
	return c.obs.t0
}
