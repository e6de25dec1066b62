package outboxbench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverArgs is the benchmark job as River's job args (JSON).
type riverArgs struct {
	Seq int64  `json:"seq"`
	Pad string `json:"pad"`
}

func (riverArgs) Kind() string { return "bench_outbox_job" }

// riverWorker runs riverArgs jobs: it records that they started.
type riverWorker struct {
	river.WorkerDefaults[riverArgs]
	h func(seq int64)
}

func (w *riverWorker) Work(_ context.Context, j *river.Job[riverArgs]) error {
	w.h(j.Args.Seq)
	return nil
}

// riverSystem drives River through its public API: Client.InsertTx and
// Client.InsertManyTx on a pgx transaction, and a started Client with
// one queue of Concurrency workers.
type riverSystem struct {
	env      *env
	pgx      *pgxpool.Pool
	cooldown time.Duration // Config.FetchCooldown
	log      *slog.Logger
	inserter *river.Client[pgx.Tx] // not started: inserts only
	client   *river.Client[pgx.Tx] // started, while it runs
}

// migrateRiver creates River's tables in the run's schema, with River's
// migrator.
func migrateRiver(ctx context.Context, env *env) error {
	m, err := rivermigrate.New(riverpgxv5.New(env.admin), &rivermigrate.Config{Schema: env.schema})
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river: migrate: %w", err)
	}
	return nil
}

func openRiver(ctx context.Context, env *env, cooldown time.Duration) (*riverSystem, error) {
	pool, err := newPool(ctx, env.cfg.PostgresURL, env.cfg.PoolSize, nil)
	if err != nil {
		return nil, err
	}
	s := &riverSystem{env: env, pgx: pool, cooldown: cooldown}
	s.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("system", s.name())
	s.inserter, err = river.NewClient(riverpgxv5.New(pool), s.config(nil))
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// config returns the client's config: with workers, one queue of
// Concurrency workers.
func (s *riverSystem) config(workers *river.Workers) *river.Config {
	c := &river.Config{Schema: s.env.schema, FetchCooldown: s.cooldown, FetchPollInterval: s.poll(), Logger: s.log}
	if workers != nil {
		c.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: s.env.cfg.Concurrency}}
		c.Workers = workers
	}
	return c
}

// poll is the FetchPollInterval: River's default beside its default
// cooldown, Config.RiverPoll beside another (River tuned).
func (s *riverSystem) poll() time.Duration {
	if s.cooldown == river.FetchCooldownDefault {
		return river.FetchPollIntervalDefault
	}
	return s.env.cfg.RiverPoll
}

func (s *riverSystem) name() string {
	if s.cooldown == river.FetchCooldownDefault {
		return "River"
	}
	return fmt.Sprintf("River, cooldown %v poll %v", s.cooldown, s.poll())
}

func (s *riverSystem) pool() *pgxpool.Pool { return s.pgx }

func (s *riverSystem) settings() string {
	return fmt.Sprintf("Config{Queues: {default: {MaxWorkers: %d}}, FetchCooldown: %v, FetchPollInterval: %v}; one pgxpool, MaxConns %d",
		s.env.cfg.Concurrency, s.cooldown, s.poll(), s.env.cfg.PoolSize)
}

func (s *riverSystem) jobTable() string { return s.env.schema + ".river_job" }

func (s *riverSystem) reset(ctx context.Context) error { return s.env.truncate(ctx, s.jobTable()) }

func (s *riverSystem) insert(ctx context.Context, tx pgx.Tx, jobs []job) error {
	c := s.inserter
	if s.client != nil {
		c = s.client
	}
	if len(jobs) == 1 {
		_, err := c.InsertTx(ctx, tx, riverArgs(jobs[0]), nil)
		return err
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		params[i] = river.InsertManyParams{Args: riverArgs(j)}
	}
	_, err := c.InsertManyTx(ctx, tx, params)
	return err
}

func (s *riverSystem) start(ctx context.Context, h func(seq int64)) error {
	workers := river.NewWorkers()
	river.AddWorker(workers, &riverWorker{h: h})
	c, err := river.NewClient(riverpgxv5.New(s.pgx), s.config(workers))
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	s.client = c
	return nil
}

func (s *riverSystem) stop(ctx context.Context) error {
	if s.client == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := s.client.Stop(ctx)
	s.client = nil
	return err
}

func (s *riverSystem) close() { s.pgx.Close() }
