package outboxbench

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/outbox/pgxoutbox"
	"github.com/jobgen/jobgen/runtime"
)

// jobgenQueue is the queue of every jobgen job here.
const jobgenQueue = "bench"

// jobgenTable is the outbox table's name in the run's schema.
const jobgenTable = "jobgen_outbox"

// relayPoolSize is the size of the relay's own pool: its transaction,
// its LISTEN, and the backlog it publishes. It comes out of
// Config.PoolSize, so that jobgen holds as many connections as River.
const relayPoolSize = 4

// jobgenJob is the benchmark job as jobgen's generator would emit it for
// a //job:queue=bench struct: EncodeJob is runtime.Encode (msgpack).
type jobgenJob job

func (jobgenJob) JobName() string                { return "bench.OutboxJob" }
func (jobgenJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: jobgenQueue} }
func (j jobgenJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// jobgenSystem drives jobgen's outbox through its public API:
// runtime.DispatchTx and runtime.DispatchManyTx on a pgx transaction
// (pgxoutbox.Tx), an outbox.Relay woken by pgxoutbox.Listen, and a
// runtime.Worker. The relay has a pgx pool and a Redis client of its
// own, so that its statements and commands can be traced apart from the
// producers' and the worker's.
type jobgenSystem struct {
	env       *env
	pgx       *pgxpool.Pool // the producers'
	relayPool *pgxpool.Pool
	relayDB   *sql.DB         // over relayPool
	table     string          // the outbox table, schema-qualified
	e         *runtime.Engine // the producers' and the worker's, on env.rdb
	// The relay's engine has the same prefix, on a Redis client of its
	// own, so that its commands can be traced apart from the worker's.
	re            *runtime.Engine
	relayRdb      redis.UniversalClient
	relayRdbClose func() error
	gen           int // engines so far: each has a key prefix of its own
	fresh         int // fresh tables so far
	log           *slog.Logger
	tracer        *tracer

	// What runs, while it does.
	relay    *outbox.Relay
	listener *pgxoutbox.Listener
	cancels  []context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	errs     []error
}

func openJobgen(ctx context.Context, env *env) (*jobgenSystem, error) {
	s := &jobgenSystem{
		env: env, table: env.schema + "." + jobgenTable, tracer: &tracer{},
		log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("system", "jobgen"),
	}
	var err error
	if s.pgx, err = newPool(ctx, env.cfg.PostgresURL, env.cfg.PoolSize-relayPoolSize, nil); err != nil {
		return nil, err
	}
	if s.relayPool, err = newPool(ctx, env.cfg.PostgresURL, relayPoolSize, s.tracer); err != nil {
		s.pgx.Close()
		return nil, err
	}
	s.relayDB = pgxoutbox.DB(s.relayPool)
	if s.relayRdb, s.relayRdbClose, err = runtime.OpenClient(env.cfg.RedisURL); err != nil {
		s.close()
		return nil, err
	}
	s.relayRdb.AddHook(s.tracer)
	if err := runtime.MigrateOutbox(ctx, s.relayDB, s.table); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *jobgenSystem) name() string        { return SystemJobgen }
func (s *jobgenSystem) pool() *pgxpool.Pool { return s.pgx }
func (s *jobgenSystem) jobTable() string    { return s.table }

func (s *jobgenSystem) settings() string {
	return fmt.Sprintf("relay: RelayConfig{Wake: pgxoutbox.Listen, Batch: %d, Cooldown: %v} (Poll 1s, Hold 1s), on a pgxpool of %d; "+
		"worker: WorkerConfig{Concurrency: %d} (Prefetch 0); producers' pgxpool MaxConns %d (%d in all)",
		cmp.Or(s.env.cfg.RelayBatch, 500), cmp.Or(s.env.cfg.RelayCooldown, 5*time.Millisecond), relayPoolSize, s.env.cfg.Concurrency,
		s.env.cfg.PoolSize-relayPoolSize, s.env.cfg.PoolSize)
}

func (s *jobgenSystem) prefix() string { return fmt.Sprintf("%s:%d", s.env.prefix, s.gen) }

// reset empties the outbox table, and gives the system new engines with
// a key prefix of their own.
func (s *jobgenSystem) reset(ctx context.Context) error {
	if err := s.closeEngines(ctx); err != nil {
		return err
	}
	s.gen++
	cfg := runtime.EngineConfig{Prefix: s.prefix(), OutboxTable: s.table}
	var err error
	if s.e, err = runtime.NewEngine(ctx, s.env.rdb, cfg); err != nil {
		return err
	}
	if s.re, err = runtime.NewEngine(ctx, s.relayRdb, cfg); err != nil {
		return err
	}
	return s.env.truncate(ctx, s.table)
}

// closeEngines closes the engines, if any, and deletes their keys.
func (s *jobgenSystem) closeEngines(ctx context.Context) error {
	var errs []error
	for _, e := range []*runtime.Engine{s.e, s.re} {
		if e != nil {
			errs = append(errs, e.Close())
		}
	}
	if s.e != nil {
		errs = append(errs, s.env.deleteKeys(ctx, s.prefix()))
	}
	s.e, s.re = nil, nil
	return errors.Join(errs...)
}

func (s *jobgenSystem) insert(ctx context.Context, tx pgx.Tx, jobs []job) error {
	ctx = runtime.WithDispatcher(ctx, s.e)
	if len(jobs) == 1 {
		_, err := runtime.DispatchTx(ctx, pgxoutbox.Tx(tx), jobgenJob(jobs[0]))
		return err
	}
	typed := make([]jobgenJob, len(jobs))
	for i, j := range jobs {
		typed[i] = jobgenJob(j)
	}
	_, err := runtime.DispatchManyTx(ctx, pgxoutbox.Tx(tx), typed)
	return err
}

// start starts the relay and the worker together.
func (s *jobgenSystem) start(ctx context.Context, h func(seq int64)) error {
	if err := s.startRelay(ctx); err != nil {
		return err
	}
	return s.startWorker(h)
}

// startRelay starts a relay, woken by LISTEN.
func (s *jobgenSystem) startRelay(ctx context.Context) error {
	l, err := pgxoutbox.Listen(ctx, s.relayPool, s.table)
	if err != nil {
		return err
	}
	r, err := outbox.NewRelay(s.re, outbox.RelayConfig{
		DB: s.relayDB, Wake: wakeRecorder{l, s.tracer}, Batch: s.env.cfg.RelayBatch, Cooldown: s.env.cfg.RelayCooldown, Logger: s.log,
	})
	if err != nil {
		l.Close()
		return err
	}
	s.relay, s.listener = r, l
	s.run(r.Run)
	return nil
}

// startWorker starts a worker on the benchmark's queue.
func (s *jobgenSystem) startWorker(h func(seq int64)) error {
	router := runtime.NewRouter()
	runtime.Register(router, jobgenJob{}.JobName(), func(_ context.Context, j jobgenJob) error {
		h(j.Seq)
		return nil
	})
	w, err := runtime.NewWorker(s.e, router, runtime.WorkerConfig{
		Name:        "outboxbench",
		Queues:      []string{jobgenQueue},
		Concurrency: s.env.cfg.Concurrency,
		Logger:      s.log,
	})
	if err != nil {
		return err
	}
	s.run(w.Run)
	return nil
}

// run runs fn in a goroutine until stop.
func (s *jobgenSystem) run(fn func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancels = append(s.cancels, cancel)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := fn(ctx); err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, err)
			s.mu.Unlock()
		}
	}()
}

// relayed returns how many jobs the running relay has pushed.
func (s *jobgenSystem) relayed() int64 { return s.relay.Counts().Relayed }

func (s *jobgenSystem) stop(context.Context) error {
	for _, c := range s.cancels {
		c()
	}
	s.wg.Wait()
	s.cancels = nil
	if s.listener != nil {
		s.listener.Close()
		s.relay, s.listener = nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := errors.Join(s.errs...)
	s.errs = nil
	return err
}

// withFreshTable runs fn on a new outbox table, which PostgreSQL has no
// statistics of yet, as after MigrateOutbox: with index, as it creates
// it, with the index that matches the relay's claim, (connection, seq)
// WHERE error IS NULL; without, that index dropped, as the outbox was
// before it had one. The table is dropped after.
func (s *jobgenSystem) withFreshTable(ctx context.Context, index bool, fn func() error) error {
	s.fresh++
	name := fmt.Sprintf("%s_fresh%d", jobgenTable, s.fresh)
	table := s.env.schema + "." + name
	if err := runtime.MigrateOutbox(ctx, s.relayDB, table); err != nil {
		return err
	}
	var err error
	if !index {
		_, err = s.pgx.Exec(ctx, "DROP INDEX "+s.env.schema+"."+name+"_claim")
	}
	if err == nil {
		base := s.table
		s.table = table
		err = fn()
		s.table = base
	}
	dctx := context.WithoutCancel(ctx)
	if _, derr := s.pgx.Exec(dctx, "DROP TABLE "+table); derr != nil {
		err = errors.Join(err, derr)
	}
	if _, derr := s.pgx.Exec(dctx, "DROP FUNCTION IF EXISTS "+table+"_notify()"); derr != nil {
		err = errors.Join(err, derr)
	}
	return err
}

func (s *jobgenSystem) close() {
	_ = s.closeEngines(context.Background())
	if s.relayRdbClose != nil {
		_ = s.relayRdbClose()
	}
	_ = s.relayDB.Close()
	s.relayPool.Close()
	s.pgx.Close()
}
