// Command outboxbench measures jobgen's transactional outbox beside River
// against one PostgreSQL, in one run, and prints a Markdown table of the
// figures and their ratios. See docs/benchmarks.md; bench/outbox/run.sh
// starts a PostgreSQL and a Redis of its own and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	outboxbench "github.com/jobgen/jobgen/bench/outbox"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "outboxbench:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg outboxbench.Config
	var systems, phases, cooldowns, rates, tablePath, cpuProfile string
	flag.StringVar(&cfg.PostgresURL, "postgres", "", "PostgreSQL to run against, postgres://…; the run works in a schema of its own and drops it at the end")
	flag.StringVar(&cfg.RedisURL, "redis", "", "Redis for jobgen, redis://host:port/db; the run deletes the keys it wrote at the end")
	flag.StringVar(&systems, "systems", strings.Join(outboxbench.AllSystems, ","), "systems to run, comma-separated: river runs once per -river-cooldowns")
	flag.StringVar(&phases, "phases", strings.Join(outboxbench.AllPhases, ","), "phases to run, comma-separated")
	flag.IntVar(&cfg.Producers, "producers", 8, "producer goroutines")
	flag.DurationVar(&cfg.InsertFor, "insert-for", 3*time.Second, "length of each insert measurement")
	flag.IntVar(&cfg.Many, "many", 100, "jobs a transaction in the many-jobs insert and the drain's backlog")
	flag.StringVar(&rates, "rates", "100,500", "jobs a second in the latency phase, one a transaction, comma-separated: the phase runs at each")
	flag.DurationVar(&cfg.LatencyFor, "latency-for", 10*time.Second, "length of the latency phase for each system, split between the rounds")
	flag.DurationVar(&cfg.Warmup, "warmup", time.Second, "idle time of the consumers before the latency phase's first job")
	flag.IntVar(&cfg.Backlog, "backlog", 50_000, "jobs in the drain phase's backlog")
	flag.IntVar(&cfg.Concurrency, "concurrency", 100, "jobgen's worker concurrency and River's MaxWorkers")
	flag.IntVar(&cfg.Pad, "pad", 64, "bytes of filler a job")
	flag.IntVar(&cfg.RelayBatch, "relay-batch", 0, "jobgen's RelayConfig.Batch, rows a claim takes; 0 keeps the relay's default (500)")
	flag.IntVar(&cfg.PoolSize, "pool", 20, "MaxConns of each system's pgx pool")
	flag.StringVar(&cooldowns, "river-cooldowns", "100ms,1ms", "River FetchCooldown values, comma-separated: a River column each")
	flag.DurationVar(&cfg.RiverPoll, "river-poll", 50*time.Millisecond, "River's FetchPollInterval beside a cooldown other than its default (River tuned)")
	flag.DurationVar(&cfg.RelayCooldown, "relay-cooldown", 0, "jobgen's RelayConfig.Cooldown; 0 keeps the relay's default (5ms)")
	flag.DurationVar(&cfg.Timeout, "timeout", 2*time.Minute, "longest wait for a phase's handlers")
	flag.IntVar(&cfg.Rounds, "rounds", 2, "times each phase runs, the order reversed each round: inserts and drains show each system's best round, latency pools the rounds' jobs")
	flag.BoolVar(&cfg.ProbeFreshTable, "probe-fresh-table", true, "drain jobgen twice more on a new, never analyzed outbox table: as internal/outboxsql/outbox.sql creates it, and with an index matching the relay's claim")
	flag.StringVar(&tablePath, "table", "", "also write the table to this file")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (narrow it with -systems and -phases)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if cfg.PostgresURL == "" || cfg.RedisURL == "" {
		return fmt.Errorf("-postgres and -redis are required (bench/outbox/run.sh starts both and passes them)")
	}
	cfg.Systems = strings.Split(systems, ",")
	cfg.Phases = strings.Split(phases, ",")
	for _, c := range strings.Split(cooldowns, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(c))
		if err != nil {
			return fmt.Errorf("-river-cooldowns: %w", err)
		}
		cfg.RiverCooldowns = append(cfg.RiverCooldowns, d)
	}
	for _, r := range strings.Split(rates, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil {
			return fmt.Errorf("-rates: %w", err)
		}
		cfg.Rates = append(cfg.Rates, n)
	}
	cfg.Log = os.Stderr

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := outboxbench.Run(ctx, cfg)
	if len(results) > 0 {
		if werr := outboxbench.WriteTable(os.Stdout, cfg, results); werr != nil {
			return werr
		}
		if tablePath != "" {
			f, ferr := os.Create(tablePath)
			if ferr != nil {
				return ferr
			}
			defer f.Close()
			if werr := outboxbench.WriteTable(f, cfg, results); werr != nil {
				return werr
			}
		}
	}
	return err
}
