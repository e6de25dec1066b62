// Command jobbench measures jobgen beside asynq, gocraft/work and taskq
// against one Redis, in one run: a JSON line per system and phase, then a
// table of each figure as a ratio to the best peer. See
// docs/benchmarks.md; bench/run.sh starts a Redis of its own and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jobgen/jobgen/bench"
)

func main() {
	bench.MaybeRunChild()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "jobbench:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg bench.Config
	var systems, phases, jsonPath, tablePath string
	flag.StringVar(&cfg.RedisURL, "redis", "", "Redis to run against, redis://[:password@]host:port/db with db ≠ 0: the harness flushes that db before every phase, and only uses one that is empty or already its own")
	flag.StringVar(&systems, "systems", strings.Join(bench.SystemNames(), ","), "systems to measure, comma-separated")
	flag.StringVar(&phases, "phases", strings.Join(bench.DefaultPhases, ","), "phases to run, comma-separated, from "+strings.Join(bench.AllPhases, ","))
	flag.IntVar(&cfg.N, "n", 100_000, "jobs in the enqueue, drain, mixed and bulk phases")
	flag.IntVar(&cfg.Producers, "producers", 8, "producer goroutines")
	flag.IntVar(&cfg.Concurrency, "concurrency", 50, "handlers each system runs at once")
	flag.IntVar(&cfg.Payload, "payload", 128, "bytes of data per job: 8 of sequence number, 8 of time, the rest filler")
	flag.IntVar(&cfg.Batch, "batch", 1000, "jobs per batch call in the bulk and rss phases")
	flag.IntVar(&cfg.Rate, "rate", 2000, "jobs a second in the latency phase")
	flag.DurationVar(&cfg.Duration, "duration", 10e9, "length of the latency phase")
	flag.IntVar(&cfg.DelayedN, "delayed-n", 2000, "jobs in the delayed phase")
	flag.IntVar(&cfg.DelayedRate, "delayed-rate", 500, "jobs a second in the delayed phase")
	flag.DurationVar(&cfg.DelayMin, "delay-min", 50e6, "shortest delay in the delayed phase")
	flag.DurationVar(&cfg.DelayMax, "delay-max", 200e6, "longest delay in the delayed phase")
	flag.IntVar(&cfg.RSSN, "rss-n", 1_000_000, "jobs drained by the worker subprocess in the rss phase")
	flag.DurationVar(&cfg.Timeout, "timeout", 120e9, "longest wait for a phase's jobs to run (the rss phase waits this times rss-n/n); jobs not run by then are missing")
	flag.IntVar(&cfg.JobgenLimit.Concurrency, "jobgen-limit", 0, "if set, jobgen's queue has this concurrency limit (EngineConfig.QueueLimits)")
	flag.IntVar(&cfg.JobgenLimit.Rate, "jobgen-rate", 0, "if set, jobgen's queue has this rate per -jobgen-per (EngineConfig.QueueLimits)")
	flag.DurationVar(&cfg.JobgenLimit.Per, "jobgen-per", time.Second, "the window of -jobgen-rate")
	flag.DurationVar(&cfg.PeerPoll, "peer-poll", 0, "if set, the peers' polling intervals (asynq TaskCheckInterval and DelayedTaskCheckInterval, taskq SchedulerBackoffTime); 0 keeps their defaults")
	flag.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the timed part of the -profile-at phase to this file")
	flag.StringVar(&cfg.ProfileAt, "profile-at", "jobgen/drain", "system/phase to profile with -cpuprofile")
	flag.StringVar(&jsonPath, "json", "", "also write the JSON lines to this file")
	flag.StringVar(&tablePath, "table", "", "also write the table to this file")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if cfg.RedisURL == "" {
		return fmt.Errorf("-redis is required (bench/run.sh starts a Redis of its own and passes it)")
	}
	cfg.Systems = split(systems)
	cfg.Phases = split(phases)
	cfg.Log = os.Stderr

	out := io.Writer(os.Stdout)
	if jsonPath != "" {
		f, err := os.Create(jsonPath)
		if err != nil {
			return err
		}
		defer f.Close()
		out = io.MultiWriter(os.Stdout, f)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var writeErr error
	recs, err := bench.Run(ctx, cfg, func(r bench.Record) {
		if err := bench.WriteJSON(out, r); err != nil && writeErr == nil {
			writeErr = err
		}
	})
	if len(recs) > 0 {
		fmt.Println()
		if terr := bench.WriteTable(os.Stdout, cfg, recs); terr != nil {
			return terr
		}
		if tablePath != "" {
			f, ferr := os.Create(tablePath)
			if ferr != nil {
				return ferr
			}
			defer f.Close()
			if terr := bench.WriteTable(f, cfg, recs); terr != nil {
				return terr
			}
		}
	}
	if err != nil {
		return err
	}
	return writeErr
}

func split(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
