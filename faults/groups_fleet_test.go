package faults_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultrelay"
	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// groupLimit is the group_limit of tenantTask.
const groupLimit = 2

// tenantTask is a Task in its tenant's fair group, with a limit of 2 jobs
// running at once: what the generator writes for
//
//	//job:queue=faults group=TenantID group_limit=2
//
// Its wire form is a Task's, so the suite's workers run it as one; its
// group and limit travel in the envelope's headers, as every grouped
// job's do.
type tenantTask struct {
	faultworker.Task
	TenantID string
}

// JobOptions implements runtime.Job.
func (tenantTask) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: queue, GroupLimit: groupLimit}
}

// JobGroup implements runtime.GroupedJob.
func (j tenantTask) JobGroup() string { return runtime.GroupKey(j.TenantID) }

// groupPath is one way to dispatch jobs.
type groupPath struct {
	name string
	// outbox is set for the paths that write to the outbox, from which
	// relay processes push the jobs to Redis.
	outbox bool
	// send dispatches jobs in one call, or in one transaction of db, and
	// returns their IDs.
	send func(ctx context.Context, db *sql.DB, jobs []tenantTask) ([]string, error)
}

// groupPaths are the dispatch paths TestGroupsAcrossDispatchPaths crosses
// with fair groups. Dispatch, one push per job, is the path the groups
// were built on.
var groupPaths = []groupPath{
	{name: "Dispatch", send: func(ctx context.Context, _ *sql.DB, jobs []tenantTask) ([]string, error) {
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			id, err := runtime.Dispatch(ctx, j)
			if err != nil {
				return nil, err
			}
			ids[i] = id
		}
		return ids, nil
	}},
	{name: "DispatchMany", send: func(ctx context.Context, _ *sql.DB, jobs []tenantTask) ([]string, error) {
		return runtime.DispatchMany(ctx, jobs)
	}},
	{name: "DispatchTx", outbox: true, send: inTx(func(ctx context.Context, tx *sql.Tx, jobs []tenantTask) ([]string, error) {
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			id, err := runtime.DispatchTx(ctx, tx, j)
			if err != nil {
				return nil, err
			}
			ids[i] = id
		}
		return ids, nil
	})},
	{name: "DispatchManyTx", outbox: true, send: inTx(func(ctx context.Context, tx *sql.Tx, jobs []tenantTask) ([]string, error) {
		return runtime.DispatchManyTx(ctx, tx, jobs)
	})},
}

// inTx runs dispatch in a transaction of its own, and commits it.
func inTx(dispatch func(context.Context, *sql.Tx, []tenantTask) ([]string, error)) func(context.Context, *sql.DB, []tenantTask) ([]string, error) {
	return func(ctx context.Context, db *sql.DB, jobs []tenantTask) ([]string, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		ids, err := dispatch(ctx, tx, jobs)
		if err != nil {
			return nil, errors.Join(err, tx.Rollback())
		}
		return ids, tx.Commit()
	}
}

// groupSizes are the figures of TestGroupsAcrossDispatchPaths.
type groupSizes struct {
	tenants, perTenant int // the limit's part: tenants × jobs each
	flood, small       int // the fairness part: one tenant's flood, then another's few jobs
	wait               time.Duration
}

// TestGroupsAcrossDispatchPaths checks fair groups with a limit from
// outside the runtime, once per dispatch path (Dispatch, DispatchMany,
// DispatchTx and DispatchManyTx, the last two through the outbox in
// PostgreSQL and two relay processes), on 3 worker processes of 20
// handlers each, with jobs of 5 to 20 ms whose group is their tenant and
// whose group_limit is 2:
//
//   - 50 tenants dispatch 20 jobs each (200 in long mode), a call or a
//     transaction per tenant: by the handlers' own begin and end times
//     (ledger lines B and E, to the nanosecond), never more than 2 jobs
//     of one tenant run at once, over every process;
//   - one tenant dispatches a flood of 2,000 jobs (20,000 in long mode)
//     in one call or transaction, then another tenant 10 jobs: its first
//     job is among the first 100 jobs to start after its dispatch began.
//
// On the outbox's paths the dispatch is the transaction, so the count
// takes in the flood's starts while the relays push the flood's rows,
// committed first, ahead of the small tenant's; the figures say when its
// first job reached Redis and its place counted from then.
func TestGroupsAcrossDispatchPaths(t *testing.T) {
	t.Parallel()
	sizes := groupSizes{
		tenants: 50, perTenant: harness.Scale(20, 200),
		flood: harness.Scale(2_000, 20_000), small: 10,
		wait: harness.Scale(2*time.Minute, 5*time.Minute),
	}
	for _, p := range groupPaths {
		t.Run(p.name, func(t *testing.T) { checkGroupPath(t, p, sizes) })
	}
}

// fairWithin is how many starts after its dispatch the small tenant's
// first job may take.
const fairWithin = 100

func checkGroupPath(t *testing.T, p groupPath, sz groupSizes) {
	const table = "faults_groups_outbox"
	b := setup(t)
	ctx := runtime.WithDispatcher(b.ctx, b.engine)
	var db *sql.DB
	if p.outbox {
		pg := harness.StartPostgres(t)
		var err error
		db, err = sql.Open("postgres", pg.URL())
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		require.NoError(t, runtime.MigrateOutbox(b.ctx, db, table))
		cfg := b.engine.Config()
		cfg.OutboxTable = table
		oe, err := runtime.NewEngine(b.ctx, b.engine.Client(), cfg)
		require.NoError(t, err)
		ctx = runtime.WithDispatcher(b.ctx, oe)
		startRelays(t, faultrelay.Config{RedisURL: b.redis.URL(), Prefix: "faults", DBURL: pg.URL(), Table: table}, 2)
	}
	f := b.fleet(t, func(c *faultworker.Config) { c.Concurrency, c.Prefetch = 20, 0 })
	f.Start(3)

	tenantOf := map[string]string{} // job ID -> tenant
	seq := 0
	send := func(tenant string, n int) []string {
		t.Helper()
		jobs := make([]tenantTask, n)
		for i := range jobs {
			seq++
			jobs[i] = tenantTask{Task: faultworker.Task{Seq: seq, Millis: 5 + seq%16, Trace: true}, TenantID: tenant}
		}
		ids, err := p.send(ctx, db, jobs)
		require.NoError(t, err, "%s of %d jobs of %s", p.name, n, tenant)
		for _, id := range ids {
			tenantOf[id] = tenant
		}
		return ids
	}
	drain := func() {
		t.Helper()
		if p.outbox {
			require.Eventually(t, func() bool {
				var n int
				return db.QueryRow("SELECT count(*) FROM "+table).Scan(&n) == nil && n == 0
			}, sz.wait, 20*time.Millisecond, "the outbox did not empty")
		}
		harness.Drain(t, b.engine, queue, sz.wait)
	}

	// The limit: every tenant's jobs in a call (a transaction) of their own.
	start := time.Now()
	for i := range sz.tenants {
		send(fmt.Sprintf("t%02d", i), sz.perTenant)
	}
	drain()
	limitTook := time.Since(start)

	// Fairness: a flood, then a small tenant.
	send("flood", sz.flood)
	dispatched := time.Now()
	pushed := make(chan time.Time, 1)
	small := send("small", sz.small)
	if p.outbox {
		go watchRelayed(b.ctx, b.engine.Client(), small, sz.wait, pushed)
	} else {
		pushed <- dispatched
	}
	started := waitStarted(f, small, sz.wait)
	f.StopAll(15 * time.Second)
	took := time.Since(start)

	recs := f.Records()
	var pushedAt time.Time
	select {
	case pushedAt = <-pushed:
	case <-time.After(time.Second):
	}
	r := measureGroups(recs, tenantOf, dispatched, pushedAt)
	t.Logf("figures: %s, %d tenants x %d jobs and a flood of %d then %d, on 3 workers x 20: %s; took %v (the limit's part %v)",
		p.name, sz.tenants, sz.perTenant, sz.flood, sz.small, r, took.Round(100*time.Millisecond), limitTook.Round(100*time.Millisecond))

	if want := sz.tenants*sz.perTenant + sz.flood + sz.small; len(tenantOf) != want {
		t.Errorf("%s: dispatched %d jobs, want %d", p.name, len(tenantOf), want)
	}
	if r.limitRuns != sz.tenants*sz.perTenant {
		t.Errorf("%s: %d runs of the %d jobs of the %d tenants, want one each", p.name, r.limitRuns, sz.tenants*sz.perTenant, sz.tenants)
	}
	if r.unknown > 0 {
		t.Errorf("%s: %d runs of jobs no dispatch returned", p.name, r.unknown)
	}
	if d := f.Deaths(); len(d) > 0 {
		t.Errorf("%s: workers died: %v\n%s", p.name, d, f.Stderr())
	}
	if r.peak > groupLimit {
		t.Errorf("%s: up to %d jobs of one tenant ran at once (%s), want at most group_limit=%d: %d of %d tenants went over it (%s)",
			p.name, r.peak, r.peakTenant, groupLimit, len(r.over), len(r.peaks), peaksOf(r.peaks, head(r.over, 8)))
	}
	if !started {
		t.Errorf("%s: of the small tenant's %d jobs, %d started within %v of their dispatch", p.name, sz.small, r.smallStarted, sz.wait)
	}
	if r.firstSmall == 0 || r.firstSmall > fairWithin {
		relayed := ""
		if r.relayLag > 0 {
			// Rows are relayed in commit order: the flood's first.
			relayed = fmt.Sprintf("; its first job was in Redis %v after its dispatch began, and it was start %s after that",
				r.relayLag.Round(time.Millisecond), position(r.firstSmallPushed))
		}
		t.Errorf("%s: the small tenant's first job was start %s after its dispatch, want within %d (%d of the flood of %d had started at its dispatch%s)",
			p.name, position(r.firstSmall), fairWithin, r.floodBefore, sz.flood, relayed)
	}
}

// groupFigures is what checkGroupPath measured.
type groupFigures struct {
	peaks      map[string]int // tenant -> most of its jobs running at once
	peak       int            // the most of any tenant
	peakTenant string
	over       []string // tenants whose peak is over groupLimit
	limitRuns  int      // runs of the 50 tenants' jobs
	unknown    int      // runs of jobs no dispatch returned
	// How many tenants the limit's part had, and their lowest and
	// highest peaks.
	tenantsN, tenantsLow, tenantsHigh int

	// Starts counted from the small tenant's dispatch (1 is the first
	// start after it; 0 is never): its first and last jobs'.
	firstSmall, lastSmall int
	smallStarted          int
	// From when its first job was seen in Redis, for the outbox's paths.
	firstSmallPushed int
	relayLag         time.Duration
	floodBefore      int // flood jobs started before the small tenant's dispatch
}

func (g groupFigures) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "at most %d running per tenant (%s), %d of %d tenants over %d", g.peak, g.peakTenant, len(g.over), len(g.peaks), groupLimit)
	if len(g.over) > 0 {
		fmt.Fprintf(&sb, " (%s)", peaksOf(g.peaks, head(g.over, 8)))
	}
	fmt.Fprintf(&sb, "; the %d tenants' peaks %d to %d", g.tenantsN, g.tenantsLow, g.tenantsHigh)
	fmt.Fprintf(&sb, "; the small tenant's first job was start %s after its dispatch, its last start %s (%d started); %d of the flood had started at its dispatch",
		position(g.firstSmall), position(g.lastSmall), g.smallStarted, g.floodBefore)
	if g.relayLag > 0 {
		fmt.Fprintf(&sb, "; its first job was in Redis %v after its dispatch began, and it was start %s after that",
			g.relayLag.Round(time.Millisecond), position(g.firstSmallPushed))
	}
	return sb.String()
}

func position(n int) string {
	if n == 0 {
		return "never"
	}
	return itoa(n)
}

func peaksOf(peaks map[string]int, tenants []string) string {
	parts := make([]string, len(tenants))
	for i, tn := range tenants {
		parts[i] = fmt.Sprintf("%s %d", tn, peaks[tn])
	}
	return strings.Join(parts, ", ")
}

// measureGroups reads the workers' ledgers: each tenant's most runs at
// once, by the B and E lines of its jobs, and where the small tenant's
// jobs came among the starts (B lines, in time order) after dispatched,
// and after pushed (its first job was seen in Redis) if that is later.
// A job starts after it was pushed, so pushed is taken to be no later
// than the small tenant's first start.
func measureGroups(recs []faultworker.Record, tenantOf map[string]string, dispatched, pushed time.Time) groupFigures {
	g := groupFigures{peaks: map[string]int{}}
	byTenant := map[string][]faultworker.Record{}
	var starts []faultworker.Record
	for _, r := range recs {
		if r.Kind != 'B' && r.Kind != 'E' {
			continue
		}
		tn, ok := tenantOf[r.ID]
		if !ok {
			if r.Kind == 'B' {
				g.unknown++
			}
			continue
		}
		byTenant[tn] = append(byTenant[tn], r)
		if r.Kind == 'B' {
			starts = append(starts, r)
		}
	}
	for tn, rs := range byTenant {
		peak, runs := overlap(rs, nil)
		g.peaks[tn] = peak
		if peak > g.peak || (peak == g.peak && tn < g.peakTenant) {
			g.peak, g.peakTenant = peak, tn
		}
		if peak > groupLimit {
			g.over = append(g.over, tn)
		}
		if tn != "flood" && tn != "small" {
			g.limitRuns += runs
			g.tenantsN++
			if g.tenantsLow == 0 || peak < g.tenantsLow {
				g.tenantsLow = peak
			}
			g.tenantsHigh = max(g.tenantsHigh, peak)
		}
	}
	slices.Sort(g.over)
	slices.SortFunc(starts, func(a, b faultworker.Record) int { return a.At.Compare(b.At) })
	for _, r := range starts {
		if tenantOf[r.ID] == "small" && r.At.Before(pushed) {
			pushed = r.At
			break
		}
	}
	n, np := 0, 0
	late := pushed.After(dispatched)
	for _, r := range starts {
		tn := tenantOf[r.ID]
		if !r.At.After(dispatched) {
			if tn == "flood" {
				g.floodBefore++
			}
			continue
		}
		n++
		if late && !r.At.Before(pushed) {
			np++
		}
		if tn != "small" {
			continue
		}
		g.smallStarted++
		if g.firstSmall == 0 {
			g.firstSmall, g.firstSmallPushed = n, np
		}
		g.lastSmall = n
	}
	if late {
		g.relayLag = pushed.Sub(dispatched)
	}
	return g
}

// waitStarted waits until each of ids has begun a run (a B line), and
// reports whether they all did within timeout.
func waitStarted(f *harness.Fleet, ids []string, timeout time.Duration) bool {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, r := range f.Records() {
			if r.Kind == 'B' && want[r.ID] {
				delete(want, r.ID)
			}
		}
		if len(want) == 0 {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// watchRelayed sends on pushed the time at which the first of ids,
// dispatched through the outbox, was seen pushed to Redis: when its
// relay's mark, which the push adds in the same script, shows. It looks
// every millisecond or so, as long as this process gets the CPU.
func watchRelayed(ctx context.Context, rdb redis.UniversalClient, ids []string, timeout time.Duration, pushed chan<- time.Time) {
	key := harness.Keys("faults", queue).Relayed
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		scores, err := rdb.ZMScore(ctx, key, ids...).Result()
		if err == nil && slices.ContainsFunc(scores, func(s float64) bool { return s != 0 }) {
			pushed <- time.Now()
			return
		}
		time.Sleep(time.Millisecond)
	}
}
