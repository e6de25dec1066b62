package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/eviction"
	"github.com/jobgen/jobgen/internal/flowlimit"
	"github.com/jobgen/jobgen/internal/histcache"
	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/lostcalls"
	"github.com/jobgen/jobgen/internal/notes"
	"github.com/jobgen/jobgen/internal/partition"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
	"github.com/jobgen/jobgen/internal/send"
)

// EngineConfig configures an Engine. The zero value is usable.
type EngineConfig struct {
	// Prefix starts every key, so that several applications, or parallel
	// tests, can share one Redis. Default "jobgen".
	Prefix string
	// MaxPayload is the largest encoded job accepted by a push, in bytes.
	// Default 1 MiB.
	MaxPayload int
	// FailedMaxCount, if positive, is the most failed jobs kept per
	// queue: past it the oldest are trimmed as jobs fail. Default 0 (or
	// negative): no limit, every failed job is kept until an operator
	// retries, forgets, flushes or prunes it (queue:prune-failed), as
	// Laravel's failed_jobs table keeps it. Trimming is counted per queue
	// (FailedStore.Trimmed), logged at WARN and shown by queue:monitor.
	FailedMaxCount int
	// FailedMaxAge, if positive, is how long a failed job is kept: older
	// ones are trimmed as jobs fail, counted as for FailedMaxCount.
	// Default 0 (or negative): no limit.
	FailedMaxAge time.Duration
	// FailedStore, if set, keeps failed jobs outside Redis, such as in a
	// PostgreSQL table (package failedsql; docs/failures.md): jobs that
	// fail move there, and Inspector.Failed reads and changes it. Workers
	// and the processes that inspect failed jobs (the console, the
	// dashboard) must all set it. It keeps every job until one is retried,
	// forgotten or pruned, so FailedMaxCount and FailedMaxAge must not be
	// set with it. Default nil: failed jobs stay in Redis.
	FailedStore FailedBackend
	// MigrateLimit is the most delayed jobs, and the most expired
	// reservations, moved to ready by one migrate call, so a large backlog
	// never blocks Redis for long. Default 1,000.
	MigrateLimit int
	// Keys seals the bodies of encrypted jobs (JobOptions.Encrypted) that
	// this engine dispatches, and opens them for its workers. Needed only
	// for encrypted jobs; see KeyRing for rotation.
	Keys *KeyRing
	// StateRetention is how long batch records and chain markers are kept
	// after their last change. Default 7 days.
	StateRetention time.Duration
	// Replication makes pushes wait for replicas (Redis WAIT), so that an
	// acknowledged dispatch survives a failover; see ReplicationConfig.
	Replication ReplicationConfig
	// RetryWindow is how long Redis remembers each push and reserve
	// call, so that a retry of the call by the Redis client itself
	// (go-redis sends a command again, up to MaxRetries times, when the
	// connection broke before its reply came) is recognised and does not
	// run twice: a retried push would queue jobs again that have run
	// meanwhile, and a retried reserve would take more jobs, the first ones
	// going to no worker. It must outlast the client's retries, which end
	// at most ReadTimeout + MaxRetries × (MaxRetryBackoff + DialTimeout +
	// WriteTimeout + ReadTimeout) after the call first ran: 53s with
	// go-redis's defaults (5s timeouts, 3 retries, 1s backoff). Each push
	// call (up to 500 jobs of one queue) and each reserve call that took
	// jobs is remembered in about 70 bytes (a push) or 110 (a reserve), in
	// a hash per queue and twelfth of the window (at least 1 s) that
	// expires as a whole, a window and a twelfth after its first write, so
	// a queue has at most 14 of them; they are named apart from the
	// queue's other keys: <prefix>:calls:{queue}:<tick>. Default 1
	// minute; negative turns it off, for a client that never retries
	// (go-redis MaxRetries -1).
	RetryWindow time.Duration
	// AllowEviction lets the engine and its workers start on a Redis whose
	// maxmemory-policy may evict keys under memory pressure (anything but
	// noeviction), which they refuse by default with ErrEvicting: an
	// evicted job, chain marker, batch record or unique lock is lost
	// without a trace. Set, Open warns once through slog's default
	// logger and each worker once through its own.
	AllowEviction bool
	// Partitions splits the queues named into that many partitions, each
	// with a hash tag of its own, so that on a Redis Cluster a busy queue
	// spreads over several masters (see partition.go). Producers and
	// workers must agree on it. Default none.
	Partitions map[string]int
	// QueueLimits sets the flow limits of the queues named (a
	// concurrency limit, a rate; see QueueLimit and
	// docs/flow-control.md) each time a Worker of the engine starts. They
	// can be changed while workers run (Inspector.SetQueueLimit,
	// SetQueueRate; the console's queue:limit), until a worker starts
	// again; a queue not named keeps the limits it has. Default none.
	QueueLimits map[string]QueueLimit

	// WorkflowRetention is how long a workflow's graph and its steps'
	// results are kept once it ends (they are kept while it runs).
	// Default DefaultWorkflowRetention, 24 hours.
	WorkflowRetention time.Duration

	// ResultRetention is how long a job's result (RecordResult) is kept
	// after its job finished, as the TTL of its key. Default 24 hours.
	ResultRetention time.Duration
	// MaxResultSize is the largest encoded result a handler may record,
	// in bytes; RecordResult refuses a larger one. Default 64 KiB.
	MaxResultSize int
	// KeepFinished keeps a record of the jobs that finish on the queues
	// named, and their runtimes by job class (docs/results.md); the key
	// "*" applies to every queue not named. Default none: a finished job
	// leaves nothing behind but the per-minute counts.
	KeepFinished map[string]FinishedConfig

	// OutboxTable is the PostgreSQL table that DispatchTx writes to and
	// the relay reads (DefaultOutboxTable, "jobgen_outbox", if empty): a
	// lower-case name, optionally schema.table (docs/outbox.md).
	OutboxTable string

	// Logger receives what the engine logs by itself, outside any
	// worker: failed jobs trimmed or not moved out of Redis, jobs given
	// back after a lost reply, the eviction policy allowed. Default
	// slog.Default().
	Logger *slog.Logger
	// Completions is the PostgreSQL database holding the outbox table,
	// whose completed table (<OutboxTable>_completed, version 2 of its
	// schema) CompleteTx writes to. With it, a worker looks a job it
	// reserves again (attempt 2 or later) up in that table before running
	// it, and acks it without running if it is there: the job was
	// completed in its handler's transaction, and its ack did not reach
	// Redis (docs/outbox.md, "Exactly-once effects"). Without it,
	// CompleteTx refuses. The engine's start checks the outbox table
	// (CheckOutbox) and fails if it is missing or too old. Default nil.
	Completions *sql.DB
	// CompletionRetention is how long a worker keeps a completed table's
	// rows: it deletes older ones, at most once a minute. A job reserved
	// again after its row is gone runs again, so keep it well past the
	// workers' RetryAfter and any Redis outage. Default 7 days; at least
	// 1 hour.
	CompletionRetention time.Duration
}

func (c *EngineConfig) setDefaults() {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = 1 << 20
	}
	if c.MigrateLimit == 0 {
		c.MigrateLimit = 1000
	}
	if c.StateRetention == 0 {
		c.StateRetention = 7 * 24 * time.Hour
	}
	if c.RetryWindow == 0 {
		c.RetryWindow = time.Minute
	}
	if c.ResultRetention == 0 {
		c.ResultRetention = 24 * time.Hour
	}
	if c.MaxResultSize == 0 {
		c.MaxResultSize = 64 << 10
	}
	if c.CompletionRetention == 0 {
		c.CompletionRetention = 7 * 24 * time.Hour
	}
	if len(c.KeepFinished) > 0 {
		keep := make(map[string]FinishedConfig, len(c.KeepFinished))
		for q, f := range c.KeepFinished {
			f.setDefaults()
			keep[q] = f
		}
		c.KeepFinished = keep
	}
	c.Replication.setDefaults()
}

func (c *EngineConfig) validate() error {
	if c.OutboxTable != "" {
		if err := checkOutboxTable(c.OutboxTable); err != nil {
			return err
		}
	}
	switch {
	case strings.ContainsAny(c.Prefix, "{}"):
		return fmt.Errorf("%w: EngineConfig.Prefix %q must not contain { or }", ErrInvalid, c.Prefix)
	case c.MaxPayload < 0:
		return fmt.Errorf("%w: EngineConfig.MaxPayload (%d) must not be negative", ErrInvalid, c.MaxPayload)
	case c.MigrateLimit < 0 || c.MigrateLimit > 10_000:
		return fmt.Errorf("%w: EngineConfig.MigrateLimit (%d) must be between 1 and 10000", ErrInvalid, c.MigrateLimit)
	case c.StateRetention < time.Second:
		return fmt.Errorf("%w: EngineConfig.StateRetention (%v) must be at least 1s", ErrInvalid, c.StateRetention)
	case c.RetryWindow > 0 && (c.RetryWindow < time.Second || c.RetryWindow > time.Hour):
		return fmt.Errorf("%w: EngineConfig.RetryWindow (%v) must be between 1s and 1h, or negative to turn it off", ErrInvalid, c.RetryWindow)
	case c.CompletionRetention < time.Hour:
		return fmt.Errorf("%w: EngineConfig.CompletionRetention (%v) must be at least 1h", ErrInvalid, c.CompletionRetention)
	}
	if err := c.validateFailedStore(); err != nil {
		return err
	}
	if err := validatePartitions(c.Partitions); err != nil {
		return err
	}
	if err := c.validateQueueLimits(); err != nil {
		return err
	}
	if err := c.validateResults(); err != nil {
		return err
	}
	return c.Replication.validate()
}

// Engine is the Redis queue, as dispatchers see it: it dispatches and
// pushes jobs, one Lua script call per push. Its other sides are views
// of it: NewInspector for operators' reads and writes, NewBroker for the
// low-level reserve and settles a Worker makes. It is safe for
// concurrent use.
//
// Pushes made at the same time from several goroutines share script
// calls (group commit): a push whose jobs all go to one queue with one
// delay (every Dispatch, Push and Later) goes out at once if fewer than
// two calls of pushes are in flight, and otherwise waits for one of them
// to land and goes out with the others waiting, up to 500 jobs in one
// round trip. A caller pushing alone never waits. Each push still gets
// its own answer: a duplicate ID or payload too large fails only its own
// push, and an error reply from Redis to a shared call sends its pushes
// again, one call each. An error that leaves the outcome unknown (a broken
// connection, too few replicas in time) is the answer of every push of
// the call, each of which may be retried with the same envelope.
//
// A push whose context ends while it waits for a flight returns an error
// wrapping the context's error, and nothing of it was sent. Once sent,
// it waits for Redis's answer, as a push sent alone does: a context that
// ends then does not cut the wait short, and the answer says whether the
// job was pushed.
type Engine struct {
	rdb redis.UniversalClient
	// store is the engine's Redis (internal/rdb): every command and
	// script call goes through it.
	store *jobrdb.Store
	cfg   EngineConfig
	// settles gathers the ends of workflow steps into batches
	// (workflow_settle.go).
	settles settleBatcher
	// lost are reserve calls whose reply was lost (reserve_lost.go).
	lost   lostcalls.List[jobrdb.Reserve]
	keys   keyspace.Keys
	known  sync.Map // queue name -> struct{}: already added to the queues set
	events listeners
	closer func() error
	parts  partition.Sets
	// flights sends concurrent single-group pushes together.
	flights send.Flights
	// phys is the engine without partitions, on the same Redis and keys:
	// a call on a partitioned queue runs on it once per partition.
	phys *Engine
	// dispatchMW wraps every push (dispatch_hooks.go).
	dispatchMW atomic.Pointer[[]DispatchMiddleware]
	// flow is what reserves learned of the queues' concurrency limits,
	// shared with phys (internal/flowlimit).
	flow *flowlimit.Limited
	// grouped are the queues seen holding grouped jobs (group.go),
	// shared with phys.
	grouped *groupedQueues
	// notifier is the subscription to notes to the engine's running
	// workers (worker_notify.go), shared with phys.
	notifier *notes.Hub
	// awaitStep, if set, replaces the package's awaitStep (the tests).
	awaitStep time.Duration
	// history keeps the per-minute counts and runtime histograms of
	// spans that have ended (internal/histcache), shared with phys.
	history *histcache.Cache
}

// Subscribe calls fn with a JobQueued event after every job this engine
// pushes. fn runs in the pushing goroutine: keep it quick.
func (e *Engine) Subscribe(fn func(Event)) { e.events.add(fn) }

// NewEngine returns an engine on rdb, which may be a single node, Sentinel
// or Cluster client. It loads the scripts. The caller keeps ownership of
// rdb.
func NewEngine(ctx context.Context, rdb redis.UniversalClient, cfg EngineConfig) (*Engine, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := send.Load(ctx, rdb); err != nil {
		return nil, fmt.Errorf("jobgen: start engine: %w", err)
	}
	var warn *slog.Logger
	if cfg.AllowEviction {
		warn = cfg.Logger
	}
	keys := keyspace.New(cfg.Prefix)
	store := jobrdb.New(rdb, keys)
	if err := eviction.Check(ctx, store, cfg.AllowEviction, warn); err != nil {
		return nil, err
	}
	// With Completions the engine has the outbox's database: a missing
	// table, or one older than CompleteTx needs, fails the start, naming
	// outbox:migrate. An error that may pass (the database down) does not.
	if cfg.Completions != nil {
		err := CheckOutbox(ctx, cfg.Completions, cfg.OutboxTable)
		if errors.Is(err, ErrNoOutboxTable) || errors.Is(err, ErrOutboxVersion) {
			return nil, fmt.Errorf("jobgen: start engine: EngineConfig.Completions: %w", err)
		}
	}
	e := &Engine{rdb: rdb, store: store, cfg: cfg, keys: keys, flow: &flowlimit.Limited{}, grouped: &groupedQueues{},
		notifier: notes.NewHub(store, keys.Notes()), history: &histcache.Cache{}}
	// The physical view: the same Redis and keys, with no partitions, for
	// the partition loop to run each partition's call on (partition.go).
	physCfg := cfg
	physCfg.Partitions = nil
	e.phys = &Engine{rdb: rdb, store: e.store, cfg: physCfg, keys: e.keys, flow: e.flow, grouped: e.grouped, notifier: e.notifier,
		history: e.history}
	e.phys.phys = e.phys
	e.phys.flights = send.Flights{Call: e.phys.pushCall, Run: e.phys.runPush, Err: pushError}
	e.flights = send.Flights{Call: e.pushCall, Run: e.runPush, Err: pushError}
	return e, nil
}

// Client returns the engine's Redis client.
func (e *Engine) Client() redis.UniversalClient { return e.rdb }

// Config returns the engine's configuration, with defaults filled in.
func (e *Engine) Config() EngineConfig { return e.cfg }

// delayMillis is a delay in whole ms for the scripts, rounded up, so that
// no job falls due before its delay has passed.
func delayMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// retryWindow is how long the scripts keep a calls hash after its first
// write, in ms, 0 when EngineConfig.RetryWindow is off: the window plus
// the span the hash covers, so the last call written to it is still
// remembered for the whole window (keyspace.Calls).
func (e *Engine) retryWindow() int64 {
	if e.cfg.RetryWindow <= 0 {
		return 0
	}
	return (e.cfg.RetryWindow + keyspace.CallsSpan(e.cfg.RetryWindow)).Milliseconds()
}

// callsKey is the calls hash of queue for a call made now.
func (e *Engine) callsKey(queue string) string {
	return e.keys.Calls(queue, keyspace.CallsTick(time.Now(), keyspace.CallsSpan(e.cfg.RetryWindow)))
}

// Close waits for the pushes the engine has queued to be sent and
// answered, then closes what the engine opened itself (through Open); an
// engine from NewEngine leaves its client open. Pushes that start after
// Close are sent on their own, on the engine's client.
func (e *Engine) Close() error {
	e.flights.Close()
	if e.closer == nil {
		return nil
	}
	return e.closer()
}

// msTime converts unix ms to a time; -1 or 0 gives the zero time.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// lastRestart is the mark of the last restart broadcast (Restart), 0 if
// there is none. Marks only grow, so a worker stops for a mark later than
// the one it read at its start. (Before marks were times they were a
// count, which also only grew.)
func (e *Engine) lastRestart(ctx context.Context) (int64, error) {
	return e.store.RestartMark(ctx, e.keys.Restart())
}
