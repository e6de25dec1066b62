package outboxbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Result is what one system measured in a run. A figure of a phase that
// did not run, or failed, is zero.
type Result struct {
	// System names the system: "jobgen", "River", or River with another
	// FetchCooldown.
	System string
	// Settings says how it was set up.
	Settings string
	// InsertOne and InsertMany are the jobs committed per second with
	// one job per transaction and with Config.Many.
	InsertOne, InsertMany float64
	// Latency holds the latency phase's figures, one per Config.Rates.
	Latency []Latency
	// BacklogRate is the jobs per second the drain phase inserted its
	// backlog at, in transactions of Config.Many.
	BacklogRate float64
	// Drain is the time from starting the consumers on the backlog to
	// the start of the last handler.
	Drain time.Duration
	// Relay and Worker are jobgen's drain in two steps: the relay alone
	// until it pushed the whole backlog, then the worker alone.
	Relay, Worker time.Duration
	// DrainFresh and DrainFreshIndexed are jobgen's drain on a new
	// outbox table, without and with the claim index
	// (Config.ProbeFreshTable).
	DrainFresh, DrainFreshIndexed time.Duration
	// LatencyTrace is where jobgen's relay spent its time in the latency
	// phase, over its rounds, and RelayTrace where it did while it
	// drained the backlog alone, in the fastest round.
	LatencyTrace, RelayTrace *Trace
	// Notes lists what went wrong: errors, and duplicate starts.
	Notes []string
}

// Latency is what the latency phase measured at one rate.
type Latency struct {
	// Rate is the jobs per second asked for, and Ran those committed.
	Rate int
	Ran  float64
	// Jobs is how many jobs it timed, over its rounds.
	Jobs int
	// P50, P90, P99 and Max are quantiles of the time from just before a
	// job's Commit to its handler's start, over every round's jobs.
	P50, P90, P99, Max time.Duration
	// Saturated reports that the system did not keep up: the producers
	// committed under 95% of Rate, or p99 reached a second.
	Saturated bool
}

// Run measures jobgen and River, one River per Config.RiverCooldowns,
// phase by phase: each phase runs every system, one after another, so
// that they are measured minutes apart at most, Config.Rounds times, the
// order reversed each round. It returns what each
// system measured, and the errors of the phases that failed.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	env, err := openEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _ = env.close(context.WithoutCancel(ctx)) }()
	if err := migrateRiver(ctx, env); err != nil {
		return nil, err
	}
	var systems []system
	if cfg.has(SystemJobgen) {
		jg, err := openJobgen(ctx, env)
		if err != nil {
			return nil, err
		}
		defer jg.close()
		systems = append(systems, jg)
	}
	for _, d := range cfg.RiverCooldowns {
		if !cfg.has(SystemRiver) {
			break
		}
		rs, err := openRiver(ctx, env, d)
		if err != nil {
			return nil, err
		}
		defer rs.close()
		systems = append(systems, rs)
	}

	results := make([]Result, len(systems))
	var errs []error
	fail := func(i int, phase string, err error) {
		if err != nil {
			err = fmt.Errorf("%s, %s: %w", systems[i].name(), phase, err)
			results[i].Notes = append(results[i].Notes, err.Error())
			errs = append(errs, err)
		}
	}
	note := func(i int, phase, s string) {
		if s != "" {
			results[i].Notes = append(results[i].Notes, fmt.Sprintf("%s: %s", phase, s))
		}
	}
	logf := func(format string, args ...any) { _, _ = fmt.Fprintf(cfg.Log, format+"\n", args...) }
	for i, s := range systems {
		results[i].System, results[i].Settings = s.name(), s.settings()
	}

	if cfg.runs(PhaseInsert) {
		for round := range cfg.Rounds {
			for _, i := range order(len(systems), round) {
				s, r := systems[i], &results[i]
				one, err := insertRate(ctx, cfg, s, 1)
				fail(i, "insert, 1 job a transaction", err)
				r.InsertOne = max(r.InsertOne, one)
				many, err := insertRate(ctx, cfg, s, cfg.Many)
				fail(i, fmt.Sprintf("insert, %d jobs a transaction", cfg.Many), err)
				r.InsertMany = max(r.InsertMany, many)
				logf("round %d  %-22s insert: %8.0f jobs/s 1 a transaction, %8.0f jobs/s %d a transaction",
					round+1, s.name(), one, many, cfg.Many)
			}
		}
	}
	if cfg.runs(PhaseLatency) {
		for _, rate := range cfg.Rates {
			pooled := make([][]time.Duration, len(systems))
			ran := make([]float64, len(systems))
			each := cfg.LatencyFor / time.Duration(cfg.Rounds)
			for round := range cfg.Rounds {
				for _, i := range order(len(systems), round) {
					s, r := systems[i], &results[i]
					l, err := latency(ctx, cfg, s, rate, each)
					fail(i, PhaseLatency, err)
					note(i, PhaseLatency, l.anomalies)
					pooled[i] = append(pooled[i], l.lat...)
					ran[i] += l.rate / float64(cfg.Rounds)
					r.LatencyTrace = r.LatencyTrace.merge(l.trace)
					logf("round %d  %-22s latency: %d jobs at %d/s (ran %.0f/s): p50 %v p90 %v p99 %v max %v", round+1,
						s.name(), len(l.lat), rate, l.rate, ms(quantile(l.lat, 0.5)), ms(quantile(l.lat, 0.9)), ms(quantile(l.lat, 0.99)), ms(quantile(l.lat, 1)))
				}
			}
			for i := range systems {
				lat := pooled[i]
				slices.Sort(lat)
				l := Latency{Rate: rate, Ran: ran[i], Jobs: len(lat),
					P50: quantile(lat, 0.5), P90: quantile(lat, 0.9), P99: quantile(lat, 0.99), Max: quantile(lat, 1)}
				l.Saturated = l.Ran < 0.95*float64(rate) || l.P99 >= time.Second
				results[i].Latency = append(results[i].Latency, l)
			}
		}
	}
	if cfg.runs(PhaseDrain) {
		for round := range cfg.Rounds {
			for _, i := range order(len(systems), round) {
				s, r := systems[i], &results[i]
				d, err := drain(ctx, cfg, s, true)
				fail(i, PhaseDrain, err)
				note(i, PhaseDrain, d.anomalies)
				r.BacklogRate = max(r.BacklogRate, d.insertRate)
				r.Drain = fastest(r.Drain, d.elapsed)
				logf("round %d  %-22s drain: backlog of %d inserted at %.0f jobs/s, drained in %v (%.0f jobs/s)",
					round+1, s.name(), cfg.Backlog, d.insertRate, d.elapsed.Round(time.Millisecond), rate(cfg.Backlog, d.elapsed))
				jg, ok := s.(*jobgenSystem)
				if !ok || err != nil {
					continue
				}
				err = drainApart(ctx, cfg, jg, &d)
				fail(i, "drain, relay then worker", err)
				if r.Relay == 0 || d.relayElapsed < r.Relay {
					r.RelayTrace = d.relayTrace
				}
				r.Relay, r.Worker = fastest(r.Relay, d.relayElapsed), fastest(r.Worker, d.workerElapsed)
				logf("round %d  %-22s drain apart: relay alone %v (%.0f jobs/s), then worker alone %v (%.0f jobs/s)", round+1, s.name(),
					d.relayElapsed.Round(time.Millisecond), rate(cfg.Backlog, d.relayElapsed),
					d.workerElapsed.Round(time.Millisecond), rate(cfg.Backlog, d.workerElapsed))
				if !cfg.ProbeFreshTable {
					continue
				}
				for _, index := range []bool{false, true} {
					label, into := "new table", &r.DrainFresh
					if index {
						label, into = "new table with the claim index", &r.DrainFreshIndexed
					}
					err := jg.withFreshTable(ctx, index, func() error {
						d, err := drain(ctx, cfg, s, false)
						if err == nil {
							*into = fastest(*into, d.elapsed)
							logf("round %d  %-22s drain, %s: drained in %v (%.0f jobs/s)",
								round+1, s.name(), label, d.elapsed.Round(time.Millisecond), rate(cfg.Backlog, d.elapsed))
						}
						return err
					})
					fail(i, "drain, "+label, err)
				}
			}
		}
	}
	return results, errors.Join(errs...)
}

// order returns the order in which round runs n systems: as given, then
// reversed, by turns.
func order(n, round int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
		if round%2 == 1 {
			idx[i] = n - 1 - i
		}
	}
	return idx
}

// fastest returns the shorter of two times, the one not 0.
func fastest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// rate returns n jobs over d as jobs per second.
func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// ms rounds d for reading: to 10µs.
func ms(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
