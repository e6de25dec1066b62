package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// Run measures every system of cfg in every phase of cfg against one
// Redis: phase by phase, each phase for every system in turn, so that
// slow drift of the machine touches all systems alike. Before each phase
// of each system it flushes the harness's database and opens the system
// afresh. emit, if not nil, gets each record as soon as it is measured.
func Run(ctx context.Context, cfg Config, emit func(Record)) ([]Record, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t, err := OpenTarget(ctx, cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	fmt.Fprintf(cfg.Log, "jobbench: redis %s, db %d; %d producers, concurrency %d, payload %d B\n",
		t.ServerVersion(ctx), t.DB, cfg.Producers, cfg.Concurrency, cfg.Payload)
	r := &runner{cfg: cfg, t: t, pad: padFor(cfg.Payload)}
	defer r.profileStop()

	var out []Record
	add := func(recs ...Record) {
		for _, rec := range recs {
			if !contains(cfg.Phases, rec.Phase) {
				continue
			}
			rec.Params = Params{Producers: cfg.Producers, Concurrency: cfg.Concurrency, Payload: cfg.Payload}
			switch rec.Phase {
			case PhaseBulk:
				rec.Params.Batch = cfg.Batch
			case PhaseLatency:
				rec.Params.Rate = cfg.Rate
			case PhaseDelayed:
				rec.Params.Rate = cfg.DelayedRate
			}
			r.logRecord(rec)
			out = append(out, rec)
			if emit != nil {
				emit(rec)
			}
		}
	}
	type scenario struct {
		phases []string
		run    func(context.Context, Info) []Record
	}
	scenarios := []scenario{
		{[]string{PhaseEnqueue, PhaseDrain}, r.enqueueDrain},
		{[]string{PhaseMixed}, r.mixed},
		{[]string{PhaseLatency}, r.latency},
		{[]string{PhaseBulk}, r.bulk},
		{[]string{PhaseDelayed}, r.delayed},
		{[]string{PhaseRSS}, r.rss},
	}
	for _, sc := range scenarios {
		wanted := false
		for _, p := range sc.phases {
			wanted = wanted || contains(cfg.Phases, p)
		}
		if !wanted {
			continue
		}
		for _, name := range cfg.Systems {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			info, _ := LookupSystem(name)
			add(sc.run(ctx, info)...)
		}
	}
	return out, r.profileErr
}

type runner struct {
	cfg Config
	t   *Target
	pad string

	profiling  *os.File
	profiled   bool
	profileErr error
}

func (r *runner) logRecord(rec Record) {
	line := fmt.Sprintf("jobbench: %-12s %-8s %7d jobs %8.2fs", rec.System, rec.Phase, rec.Jobs, rec.Seconds)
	if rec.JobsPerSec > 0 {
		line += fmt.Sprintf(" %9.0f jobs/s", rec.JobsPerSec)
	}
	if l := rec.Latency; l != nil {
		line += fmt.Sprintf("  p50 %.3fms p99 %.3fms max %.3fms", l.P50, l.P99, l.Max)
	}
	if rec.RedisBytesPerJob > 0 {
		line += fmt.Sprintf("  %.0f B/job in redis", rec.RedisBytesPerJob)
	}
	if rec.RedisCPUPerJob > 0 || rec.ClientCPUPerJob > 0 {
		line += fmt.Sprintf("  cpu/job redis %.1fµs client %.1fµs", rec.RedisCPUPerJob, rec.ClientCPUPerJob)
	}
	if rec.RSS != nil {
		line += fmt.Sprintf("  rss start %.1fMB end %.1fMB max %.1fMB", rec.RSS.StartMB, rec.RSS.EndMB, rec.RSS.MaxMB)
	}
	if !rec.Complete {
		line += fmt.Sprintf("  INCOMPLETE (%d duplicates, %d missing) %s", rec.Duplicates, rec.Missing, rec.Error)
	}
	fmt.Fprintln(r.cfg.Log, line)
}

// open flushes the database and opens a fresh instance of the system.
func (r *runner) open(ctx context.Context, info Info) (System, error) {
	if err := r.t.Flush(ctx); err != nil {
		return nil, err
	}
	// Every system shares this process: the garbage the last one left is
	// collected now, not in the middle of the next one's phase.
	goruntime.GC()
	return info.Open(ctx, r.options())
}

func (r *runner) options() Options {
	return Options{URL: r.cfg.RedisURL, PeerPoll: r.cfg.PeerPoll, Pool: r.cfg.Producers + r.cfg.Concurrency + 8, JobgenLimit: r.cfg.JobgenLimit}
}

// failed returns records of phases that could not run.
func failed(info Info, err error, phases ...string) []Record {
	out := make([]Record, len(phases))
	for i, p := range phases {
		out[i] = Record{System: info.Name, Phase: p, Error: err.Error()}
	}
	return out
}

// errs keeps a count of errors and the first one.
type errs struct {
	mu    sync.Mutex
	n     int
	first error
}

func (e *errs) add(err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	e.n++
	if e.first == nil {
		e.first = err
	}
	e.mu.Unlock()
}

func (e *errs) err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first == nil {
		return nil
	}
	return fmt.Errorf("%d errors, the first: %w", e.n, e.first)
}

// produce runs the producers: together they call send once for each of
// the units 0..n-1, in order of i. If pace is positive, unit i is sent
// no earlier than start + i*pace.
func (r *runner) produce(ctx context.Context, n int, pace time.Duration, send func(i int64) error) error {
	var next atomic.Int64
	var e errs
	var wg sync.WaitGroup
	start := time.Now()
	for range r.cfg.Producers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if pace > 0 {
					if d := time.Until(start.Add(time.Duration(i) * pace)); d > 0 {
						time.Sleep(d)
					}
				}
				e.add(send(i))
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.err()
}

// settle waits for the tracker's jobs, stops the CPU profile if one is
// running, stops the workers, and fills in rec's counts. It returns when the last job first ran (or now, if not
// all did).
func (r *runner) settle(ctx context.Context, sys System, tr *tracker, rec *Record, sendErr error) time.Time {
	ok := r.wait(ctx, tr)
	r.profileStop()
	end := tr.lastRun()
	if !ok {
		end = time.Now()
	}
	stopErr := sys.Stop()
	rec.Duplicates, rec.Missing = tr.counts()
	err := errors.Join(sendErr, stopErr)
	if !ok && ctx.Err() == nil {
		err = errors.Join(err, fmt.Errorf("not every job ran within %v", r.cfg.Timeout))
	}
	if err != nil {
		rec.Error = err.Error()
	}
	rec.Complete = err == nil && rec.Duplicates == 0 && rec.Missing == 0
	return end
}

func (r *runner) wait(ctx context.Context, tr *tracker) bool {
	timer := time.NewTimer(r.cfg.Timeout)
	defer timer.Stop()
	select {
	case <-tr.done:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (r *runner) job(seq int64, at time.Time) Job {
	return Job{Seq: seq, At: at.UnixNano(), Pad: r.pad}
}

// enqueueDrain is the enqueue phase (producers, no workers; Redis memory
// per waiting job), then the drain phase (workers on the jobs waiting).
func (r *runner) enqueueDrain(ctx context.Context, info Info) []Record {
	n := r.cfg.N
	sys, err := r.open(ctx, info)
	if err != nil {
		return failed(info, err, PhaseEnqueue, PhaseDrain)
	}
	defer sys.Close()
	enq := Record{System: info.Name, Phase: PhaseEnqueue, Jobs: n, Mode: "single-job enqueue"}
	mem0, memErr := r.t.UsedMemory(ctx)
	cpu := r.cpuStart(ctx)
	start := time.Now()
	r.profileStart(info, PhaseEnqueue)
	sendErr := r.produce(ctx, n, 0, func(i int64) error { return sys.Enqueue(ctx, r.job(i, time.Now())) })
	r.profileStop()
	enq.Seconds = time.Since(start).Seconds()
	cpu.record(ctx, r, &enq)
	enq.JobsPerSec = float64(n) / enq.Seconds
	mem1, err := r.t.UsedMemory(ctx)
	if memErr == nil && err == nil {
		enq.RedisBytesPerJob = float64(mem1-mem0) / float64(n)
	}

	drain := Record{System: info.Name, Phase: PhaseDrain, Jobs: n}
	tr := newTracker(n)
	cpu = r.cpuStart(ctx)
	start = time.Now()
	r.profileStart(info, PhaseDrain)
	if err := sys.Start(r.cfg.Concurrency, tr.handle); err != nil {
		r.profileStop()
		return failed(info, err, PhaseEnqueue, PhaseDrain)
	}
	end := r.settle(ctx, sys, tr, &drain, nil)
	cpu.record(ctx, r, &drain)
	drain.Seconds = end.Sub(start).Seconds()
	drain.JobsPerSec = float64(n) / drain.Seconds
	// The enqueue phase is checked by the drain that follows it.
	enq.Duplicates, enq.Missing = drain.Duplicates, drain.Missing
	enq.Complete = drain.Complete && sendErr == nil
	if sendErr != nil {
		enq.Error = sendErr.Error()
	} else if !drain.Complete {
		enq.Error = "the drain that checks these jobs was incomplete"
	}
	return []Record{enq, drain}
}

// mixed runs producers and workers at once.
func (r *runner) mixed(ctx context.Context, info Info) []Record {
	n := r.cfg.N
	sys, err := r.open(ctx, info)
	if err != nil {
		return failed(info, err, PhaseMixed)
	}
	defer sys.Close()
	rec := Record{System: info.Name, Phase: PhaseMixed, Jobs: n, Mode: "single-job enqueue, workers running"}
	tr := newTracker(n)
	if err := sys.Start(r.cfg.Concurrency, tr.handle); err != nil {
		return failed(info, err, PhaseMixed)
	}
	cpu := r.cpuStart(ctx)
	start := time.Now()
	r.profileStart(info, PhaseMixed)
	sendErr := r.produce(ctx, n, 0, func(i int64) error { return sys.Enqueue(ctx, r.job(i, time.Now())) })
	end := r.settle(ctx, sys, tr, &rec, sendErr)
	cpu.record(ctx, r, &rec)
	rec.Seconds = end.Sub(start).Seconds()
	rec.JobsPerSec = float64(n) / rec.Seconds
	rec.Latency = tr.latency()
	return []Record{rec}
}

// idle is how long workers are left to go idle before a paced phase.
const idle = 200 * time.Millisecond

// latency sends jobs at a fixed rate to running workers and measures
// pickup latency: from just before the enqueue call to the handler's
// start.
func (r *runner) latency(ctx context.Context, info Info) []Record {
	n := max(int(float64(r.cfg.Rate)*r.cfg.Duration.Seconds()), 1)
	sys, err := r.open(ctx, info)
	if err != nil {
		return failed(info, err, PhaseLatency)
	}
	defer sys.Close()
	rec := Record{System: info.Name, Phase: PhaseLatency, Jobs: n, Mode: fmt.Sprintf("%d jobs/s for %v", r.cfg.Rate, r.cfg.Duration)}
	tr := newTracker(n)
	if err := sys.Start(r.cfg.Concurrency, tr.handle); err != nil {
		return failed(info, err, PhaseLatency)
	}
	time.Sleep(idle)
	start := time.Now()
	r.profileStart(info, PhaseLatency)
	sendErr := r.produce(ctx, n, time.Second/time.Duration(r.cfg.Rate), func(i int64) error {
		return sys.Enqueue(ctx, r.job(i, time.Now()))
	})
	sent := time.Since(start)
	r.settle(ctx, sys, tr, &rec, sendErr)
	rec.Seconds = sent.Seconds()
	rec.JobsPerSec = float64(n) / rec.Seconds
	rec.Latency = tr.latency()
	return []Record{rec}
}

// bulk sends jobs in batches with no workers running, then drains them
// (untimed) to check that every job arrived once.
func (r *runner) bulk(ctx context.Context, info Info) []Record {
	n, b := r.cfg.N, r.cfg.Batch
	sys, err := r.open(ctx, info)
	if err != nil {
		return failed(info, err, PhaseBulk)
	}
	defer sys.Close()
	rec := Record{System: info.Name, Phase: PhaseBulk, Jobs: n, Mode: info.BulkMode}
	batches := (n + b - 1) / b
	cpu := r.cpuStart(ctx)
	start := time.Now()
	r.profileStart(info, PhaseBulk)
	sendErr := r.produce(ctx, batches, 0, func(i int64) error {
		first := int(i) * b
		jobs := make([]Job, 0, min(b, n-first))
		now := time.Now()
		for seq := first; seq < min(first+b, n); seq++ {
			jobs = append(jobs, r.job(int64(seq), now))
		}
		return sys.EnqueueBatch(ctx, jobs)
	})
	r.profileStop()
	rec.Seconds = time.Since(start).Seconds()
	cpu.record(ctx, r, &rec)
	rec.JobsPerSec = float64(n) / rec.Seconds
	tr := newTracker(n)
	if err := sys.Start(r.cfg.Concurrency, tr.handle); err != nil {
		return failed(info, err, PhaseBulk)
	}
	r.settle(ctx, sys, tr, &rec, sendErr)
	return []Record{rec}
}

// delayAt spreads the delays of the delayed phase evenly over the range,
// in an order that mixes short and long ones.
func (r *runner) delayAt(seq int64) time.Duration {
	span := r.cfg.DelayMax - r.cfg.DelayMin
	return r.cfg.DelayMin + time.Duration(float64(span)*float64(seq*61%101)/100)
}

// delayed sends delayed jobs at a fixed rate to running workers and
// measures lateness: handler start minus the due time asked for.
func (r *runner) delayed(ctx context.Context, info Info) []Record {
	n := r.cfg.DelayedN
	sys, err := r.open(ctx, info)
	if err != nil {
		return failed(info, err, PhaseDelayed)
	}
	defer sys.Close()
	rec := Record{System: info.Name, Phase: PhaseDelayed, Jobs: n,
		Mode: fmt.Sprintf("%d jobs/s, delays %v-%v; %s", r.cfg.DelayedRate, r.cfg.DelayMin, r.cfg.DelayMax, info.DelayMode)}
	tr := newTracker(n)
	if err := sys.Start(r.cfg.Concurrency, tr.handle); err != nil {
		return failed(info, err, PhaseDelayed)
	}
	time.Sleep(idle)
	start := time.Now()
	r.profileStart(info, PhaseDelayed)
	sendErr := r.produce(ctx, n, time.Second/time.Duration(r.cfg.DelayedRate), func(i int64) error {
		d := r.delayAt(i)
		return sys.EnqueueDelayed(ctx, r.job(i, time.Now().Add(d)), d)
	})
	sent := time.Since(start)
	r.settle(ctx, sys, tr, &rec, sendErr)
	rec.Seconds = sent.Seconds()
	rec.Latency = tr.latency()
	return []Record{rec}
}

// profileStart starts the CPU profile if this is the phase it is for,
// and it has not been taken yet.
func (r *runner) profileStart(info Info, phase string) {
	if r.cfg.CPUProfile == "" || r.profiled || r.cfg.ProfileAt != info.Name+"/"+phase {
		return
	}
	r.profiled = true
	f, err := os.Create(r.cfg.CPUProfile)
	if err != nil {
		r.profileErr = err
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		r.profileErr = err
		return
	}
	r.profiling = f
}

func (r *runner) profileStop() {
	if r.profiling == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := r.profiling.Close(); err != nil && r.profileErr == nil {
		r.profileErr = err
	}
	r.profiling = nil
}
