package outboxbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// insertRate runs Producers goroutines for InsertFor, each inserting per
// jobs per transaction, with nothing consuming, and returns the jobs
// committed per second.
func insertRate(ctx context.Context, cfg Config, s system, per int) (float64, error) {
	if err := s.reset(ctx); err != nil {
		return 0, err
	}
	filler := pad(cfg.Pad)
	var total atomic.Int64
	deadline := time.Now().Add(cfg.InsertFor)
	t0 := time.Now()
	err := produce(ctx, cfg.Producers, func(ctx context.Context) error {
		jobs := make([]job, per)
		for i := range jobs {
			jobs[i] = job{Pad: filler}
		}
		for seq := int64(0); time.Now().Before(deadline); seq++ {
			for i := range jobs {
				jobs[i].Seq = seq*int64(per) + int64(i)
			}
			if err := inTx(ctx, s.pool(), func(tx pgx.Tx) error { return s.insert(ctx, tx, jobs) }, nil); err != nil {
				return err
			}
			total.Add(int64(per))
		}
		return nil
	})
	return float64(total.Load()) / time.Since(t0).Seconds(), err
}

// latencyResult is what one round of the latency phase measured.
type latencyResult struct {
	lat       []time.Duration // each job's, sorted
	rate      float64         // jobs committed per second, as run
	anomalies string
	trace     *Trace // jobgen's
}

// latency starts the consumers, lets them idle for Warmup, then commits
// rate jobs a second, one per transaction, for d, and measures from just
// before each Commit to the start of the job's handler.
func latency(ctx context.Context, cfg Config, s system, rate int, d time.Duration) (latencyResult, error) {
	if err := s.reset(ctx); err != nil {
		return latencyResult{}, err
	}
	n := max(1, int(float64(rate)*d.Seconds()))
	tr := newTracker(n)
	jg, _ := s.(*jobgenSystem)
	if jg != nil {
		jg.tracer.start(tr.base)
		defer jg.tracer.stop()
	}
	if err := s.start(ctx, tr.handle); err != nil {
		return latencyResult{}, err
	}
	time.Sleep(cfg.Warmup)

	filler := pad(cfg.Pad)
	interval := time.Second / time.Duration(rate)
	var next atomic.Int64
	t0 := time.Now()
	err := produce(ctx, cfg.Producers, func(ctx context.Context) error {
		for {
			seq := next.Add(1) - 1
			if seq >= int64(n) {
				return nil
			}
			time.Sleep(time.Until(t0.Add(time.Duration(seq) * interval)))
			jobs := []job{{Seq: seq, Pad: filler}}
			err := inTx(ctx, s.pool(), func(tx pgx.Tx) error { return s.insert(ctx, tx, jobs) }, func() { tr.committing(seq) })
			if err != nil {
				return err
			}
		}
	})
	ran := float64(n) / time.Since(t0).Seconds()
	if err == nil {
		err = tr.wait(ctx, cfg.Timeout)
	}
	var trace *Trace
	if jg != nil {
		trace = jg.tracer.stop().summary(tr)
	}
	err = errors.Join(err, s.stop(ctx))
	return latencyResult{lat: tr.latencies(), rate: ran, anomalies: tr.anomalies(), trace: trace}, err
}

// drainResult is what the drain phase measured.
type drainResult struct {
	insertRate float64       // the backlog's jobs inserted per second
	elapsed    time.Duration // from the consumers' start to the last handler's
	anomalies  string
	// jobgen's relay and worker apart: the relay alone, then the worker.
	relayElapsed, workerElapsed time.Duration
	relayTrace                  *Trace
}

// backlog inserts Backlog jobs, numbered from 0, in transactions of Many,
// and returns the jobs inserted per second.
func backlog(ctx context.Context, cfg Config, s system) (float64, error) {
	filler := pad(cfg.Pad)
	var next atomic.Int64
	t0 := time.Now()
	err := produce(ctx, cfg.Producers, func(ctx context.Context) error {
		for {
			first := next.Add(int64(cfg.Many)) - int64(cfg.Many)
			if first >= int64(cfg.Backlog) {
				return nil
			}
			jobs := make([]job, 0, cfg.Many)
			for seq := first; seq < min(first+int64(cfg.Many), int64(cfg.Backlog)); seq++ {
				jobs = append(jobs, job{Seq: seq, Pad: filler})
			}
			if err := inTx(ctx, s.pool(), func(tx pgx.Tx) error { return s.insert(ctx, tx, jobs) }, nil); err != nil {
				return err
			}
		}
	})
	return float64(cfg.Backlog) / time.Since(t0).Seconds(), err
}

// drain inserts the backlog, then starts the consumers and times them
// until the last handler has started. With analyze, the table the jobs
// wait in is analyzed first, as autovacuum would have done by then in a
// table that has been in use.
func drain(ctx context.Context, cfg Config, s system, analyze bool) (drainResult, error) {
	var res drainResult
	if err := s.reset(ctx); err != nil {
		return res, err
	}
	var err error
	if res.insertRate, err = backlog(ctx, cfg, s); err != nil {
		return res, err
	}
	if analyze {
		if err := analyzeJobs(ctx, s); err != nil {
			return res, err
		}
	}
	tr := newTracker(cfg.Backlog)
	t0 := tr.now()
	if err := s.start(ctx, tr.handle); err != nil {
		return res, err
	}
	err = errors.Join(tr.wait(ctx, cfg.Timeout), s.stop(ctx))
	res.elapsed = tr.lastStart() - time.Duration(t0)
	res.anomalies = tr.anomalies()
	return res, err
}

// analyzeJobs has PostgreSQL gather the statistics of the table s's jobs
// wait in, as autovacuum does once enough of its rows have changed.
func analyzeJobs(ctx context.Context, s system) error {
	if _, err := s.pool().Exec(ctx, "ANALYZE "+s.jobTable()); err != nil {
		return fmt.Errorf("analyze %s: %w", s.jobTable(), err)
	}
	return nil
}

// drainApart drains jobgen's backlog, analyzed, in two steps: the relay
// alone, until it has pushed every job, then the worker alone.
func drainApart(ctx context.Context, cfg Config, s *jobgenSystem, res *drainResult) error {
	if err := s.reset(ctx); err != nil {
		return err
	}
	if _, err := backlog(ctx, cfg, s); err != nil {
		return err
	}
	if err := analyzeJobs(ctx, s); err != nil {
		return err
	}
	tr := newTracker(cfg.Backlog)
	t0 := time.Now()
	s.tracer.start(t0)
	defer s.tracer.stop()
	if err := s.startRelay(ctx); err != nil {
		return err
	}
	deadline := t0.Add(cfg.Timeout)
	for s.relayed() < int64(cfg.Backlog) {
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("the relay pushed %d of %d jobs in %v", s.relayed(), cfg.Backlog, cfg.Timeout), s.stop(ctx))
		}
		time.Sleep(time.Millisecond)
	}
	res.relayElapsed = time.Since(t0)
	res.relayTrace = s.tracer.stop().summary(nil)
	w0 := tr.now()
	if err := s.startWorker(tr.handle); err != nil {
		return errors.Join(err, s.stop(ctx))
	}
	err := errors.Join(tr.wait(ctx, cfg.Timeout), s.stop(ctx))
	res.workerElapsed = tr.lastStart() - time.Duration(w0)
	return err
}

// produce runs n producers until each returns, and returns their first
// error. An error stops the others.
func produce(ctx context.Context, n int, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = fn(ctx); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}
