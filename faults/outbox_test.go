package faults_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultrelay"
	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// TestOutboxRelayKill9 commits and rolls back transactions that dispatch
// jobs through the outbox, from 8 producers, while two relays push them
// to Redis and are killed with SIGKILL at random points of their work,
// one at a time, 24 times (200 in long mode); PostgreSQL and Redis are
// each crashed and restarted once. No committed job may be lost or pushed
// twice, and no job of a rolled-back transaction may run. A job may run
// twice only when its handler finished while Redis was down, so that its
// ack could not land, or when the lease it was reserved under before
// Redis went down ran out before Redis was back: that is the
// at-least-once of every queue, not the relay's doing.
func TestOutboxRelayKill9(t *testing.T) {
	kills := harness.Scale(24, 200)
	b := setup(t, "--appendonly", "yes", "--appendfsync", "always")
	pg := harness.StartPostgres(t)
	db, err := sql.Open("postgres", pg.URL())
	require.NoError(t, err)
	defer db.Close()
	const table = "faults_outbox"
	require.NoError(t, runtime.MigrateOutbox(b.ctx, db, table))
	cfg := b.engine.Config()
	cfg.OutboxTable = table
	oe, err := runtime.NewEngine(b.ctx, b.engine.Client(), cfg)
	require.NoError(t, err)

	f := b.fleet(t, nil)
	f.Start(2)
	relays := startRelays(t, faultrelay.Config{RedisURL: b.redis.URL(), Prefix: "faults", DBURL: pg.URL(), Table: table, Batch: 50}, 2)

	ctx, stop := context.WithCancel(runtime.WithDispatcher(b.ctx, oe))
	p := &producers{committed: map[string]int{}, rolledBack: map[string]bool{}, unknown: map[string]bool{}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); p.run(ctx, db) }()
	}

	var redisDown, redisUp time.Time
	for i := range kills {
		relays.killAtRandom(i % 2)
		switch i {
		case kills / 3:
			pg.Restart()
		case 2 * kills / 3:
			redisDown = time.Now()
			b.redis.Kill()
			time.Sleep(300 * time.Millisecond)
			b.redis.Start()
			redisUp = time.Now()
		}
	}
	stop()
	wg.Wait()

	// The relays that are left empty the outbox.
	require.Eventually(t, func() bool {
		var n int
		return db.QueryRow("SELECT count(*) FROM "+table).Scan(&n) == nil && n == 0
	}, 2*time.Minute, 100*time.Millisecond, "the outbox did not empty")
	relays.stopAll()
	harness.Drain(t, b.engine, queue, time.Minute)
	f.StopAll(15 * time.Second)

	o, err := harness.Check(b.ctx, b.engine, queue, p.committed, f.Records())
	require.NoError(t, err)
	phantoms, unexplained, pushedTwice, unacked, twice := 0, 0, 0, 0, 0
	var why []string
	retryAfter := b.workerConfig("").RetryAfter
	for id, runs := range harness.GroupRuns(f.Records()) {
		// A run that finished while Redis was down could not be acked,
		// so its job runs again; the ack is sent at once after the
		// handler returns, so a second's margin each side covers it. A
		// job reserved before the kill, whose lease ran out while Redis
		// was down, is taken over after the restart and runs again too:
		// its first run can end up to a lease (RetryAfter) after it.
		if len(runs.Finishes) > 1 {
			first := runs.Finishes[0].At
			if first.After(redisDown.Add(-time.Second)) && first.Before(redisUp.Add(retryAfter+time.Second)) {
				unacked += len(runs.Finishes) - 1
			} else {
				twice += len(runs.Finishes) - 1
				if len(why) < 5 {
					why = append(why, fmt.Sprintf("%s: first run %v to %v, second run ended %v (from the kill; Redis was up again at %v)", id,
						runs.Starts[0].At.Sub(redisDown), first.Sub(redisDown), runs.Finishes[1].At.Sub(redisDown), redisUp.Sub(redisDown)))
				}
			}
		}
		// Each push starts the job's attempts afresh: two first attempts
		// are two pushes.
		firsts := 0
		for _, s := range runs.Starts {
			if s.Attempt == 1 {
				firsts++
			}
		}
		pushedTwice += max(firsts-1, 0)
		switch {
		case p.rolledBack[id]:
			phantoms++
		case p.committed[id] == 0 && !p.unknown[id]:
			unexplained++
		}
	}
	claimed, pushed, skipped, err := faultrelay.Totals(relays.ledgers())
	require.NoError(t, err)
	t.Logf("figures: %d relay kills, PostgreSQL and Redis restarted once; %d transactions committed (%d jobs), %d rolled back (%d jobs), %d with an unknown outcome; "+
		"relays claimed %d rows, pushed %d jobs, found %d pushed before by a killed relay; lost %d, run twice %d (pushed twice %d, finished while Redis was down %d), phantom %d",
		kills, p.commits, len(p.committed), p.rollbacks, len(p.rolledBack), p.unknowns, claimed, pushed, skipped, len(o.Lost), o.Duplicates, pushedTwice, unacked, phantoms)
	harness.RequireClean(t, o)
	require.Zero(t, pushedTwice, "jobs pushed twice")
	require.Zero(t, twice, "jobs run twice other than those whose handler finished while Redis was down, or while a lease taken before it went down could run out: %v", why)
	require.Zero(t, phantoms, "jobs of rolled-back transactions ran")
	require.Zero(t, unexplained, "jobs ran that no producer dispatched")
	require.GreaterOrEqual(t, len(p.committed), 100)
}

// producers dispatch Tasks in transactions that commit or roll back at
// random, and remember which did which.
type producers struct {
	mu                           sync.Mutex
	seq                          int
	committed                    map[string]int // job ID -> seq
	rolledBack, unknown          map[string]bool
	commits, rollbacks, unknowns int
}

func (p *producers) run(ctx context.Context, db *sql.DB) {
	for ctx.Err() == nil {
		p.once(ctx, db)
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
	}
}

// once runs one transaction of 1 to 5 jobs.
func (p *producers) once(ctx context.Context, db *sql.DB) {
	tx, err := db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		time.Sleep(50 * time.Millisecond) // PostgreSQL restarting
		return
	}
	n := 1 + rand.IntN(5)
	tasks := make([]faultworker.Task, n)
	p.mu.Lock()
	for i := range tasks {
		p.seq++
		tasks[i] = faultworker.Task{Seq: p.seq, Millis: 2}
	}
	p.mu.Unlock()
	ids, err := runtime.NewPendingMany(tasks).OnQueue(queue).DispatchTx(ctx, tx)
	if err != nil {
		_ = tx.Rollback()
		return
	}
	commit := rand.IntN(10) < 7
	if !commit {
		err = tx.Rollback()
	} else {
		err = tx.Commit()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !commit:
		// A rollback that fails leaves nothing committed either.
		p.rollbacks++
		for _, id := range ids {
			p.rolledBack[id] = true
		}
	case err != nil:
		// The connection broke during COMMIT: it may or may not have
		// committed.
		p.unknowns++
		for _, id := range ids {
			p.unknown[id] = true
		}
	default:
		p.commits++
		for i, id := range ids {
			p.committed[id] = tasks[i].Seq
		}
	}
}

// relays are child relay processes, by slot.
type relays struct {
	t     *testing.T
	cfg   faultrelay.Config
	dir   string
	mu    sync.Mutex
	procs []*exec.Cmd
	gens  []int
	files []string
}

func startRelays(t *testing.T, cfg faultrelay.Config, n int) *relays {
	r := &relays{t: t, cfg: cfg, dir: t.TempDir(), procs: make([]*exec.Cmd, n), gens: make([]int, n)}
	t.Cleanup(r.stopAll)
	for slot := range n {
		r.start(slot)
	}
	return r
}

// start starts the relay of slot and waits until it is ready.
func (r *relays) start(slot int) {
	r.t.Helper()
	cfg := r.cfg
	cfg.Ledger = filepath.Join(r.dir, fmt.Sprintf("relay%d.g%03d.ledger", slot, r.gens[slot]))
	r.gens[slot]++
	js, err := json.Marshal(cfg)
	require.NoError(r.t, err)
	cmd := harness.ChildCommand(faultrelay.ConfigEnv + "=" + string(js))
	out, err := cmd.StdoutPipe()
	require.NoError(r.t, err)
	cmd.Stderr = os.Stderr
	require.NoError(r.t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(r.t, err, "relay %d did not start", slot)
	require.Equal(r.t, "ready\n", line)
	r.mu.Lock()
	r.procs[slot] = cmd
	r.files = append(r.files, cfg.Ledger)
	r.mu.Unlock()
}

// killAtRandom lets the relay of slot work for 30 to 300 ms, kills it
// with SIGKILL, and starts another in its place.
func (r *relays) killAtRandom(slot int) {
	time.Sleep(time.Duration(30+rand.IntN(270)) * time.Millisecond)
	r.mu.Lock()
	cmd := r.procs[slot]
	r.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	r.start(slot)
}

// stopAll stops every relay with SIGTERM.
func (r *relays) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, cmd := range r.procs {
		if cmd == nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		r.procs[i] = nil
	}
}

func (r *relays) ledgers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.files...)
}
