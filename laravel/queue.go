package laravel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime"

	"github.com/jobgen/jobgen/internal/send"
	"github.com/jobgen/jobgen/runtime/lua"
)

// The bridge's scripts are runtime/lua's laravel_*.lua, run by SHA with
// NOSCRIPT recovery (internal/send).
var (
	scriptPush    = lua.Get("laravel_push")
	scriptLater   = lua.Get("laravel_later")
	scriptMigrate = lua.Get("laravel_migrate")
	scriptPop     = lua.Get("laravel_pop")
	scriptRelease = lua.Get("laravel_release")
	scriptDelete  = lua.Get("laravel_delete")
	scriptExtend  = lua.Get("laravel_extend")
	scriptSizes   = lua.Get("laravel_sizes")
)

// run runs script s on keys and args.
func (q *Queue) run(ctx context.Context, s *lua.Script, keys []string, args ...any) *redis.Cmd {
	return send.Call{Script: s, Keys: keys, Args: args}.Run(ctx, q.rdb)
}

// Config is a Laravel Redis queue connection: the redis entry of
// config/queue.php and the prefix of config/database.php's redis
// connection.
type Config struct {
	// Prefix is the Redis connection's key prefix (database.redis.options.prefix):
	// "laravel_database_" by default in Laravel 8 to 12, "laravel-database-"
	// in 13, built from APP_NAME. Empty means none.
	Prefix string
	// HashTag puts the queue's name in braces, queues:{NAME}, as a Laravel
	// app on Redis Cluster must name its queues.
	HashTag bool
	// RetryAfter is the connection's retry_after: a reserved job whose
	// worker has not deleted or released it this long after it was popped
	// goes back to the queue. Whole seconds; default 90s.
	RetryAfter time.Duration
	// BlockFor is the connection's block_for: how long a pop waits for a
	// job on an empty queue (BLPOP on its notify list). 0, the default,
	// does not wait.
	BlockFor time.Duration
	// MigrateLimit is the most due delayed jobs, and expired reservations,
	// moved to the ready list per pop. Default 1,000 (Laravel moves
	// them all).
	MigrateLimit int
	// CachePrefix is where Laravel's cache store keeps its keys in the
	// same Redis: the cache connection's prefix plus cache.prefix, for
	// example "laravel_database_laravel_cache:". Set, workers stop at
	// queue:restart (see RestartKey). Empty, they do not read it.
	CachePrefix string
	// Connection is the queue connection's name in config/queue.php,
	// which queue:pause names its keys by (Laravel 12 and later);
	// default "redis".
	Connection string
	// Laravel is the app's Laravel major version, 8 to 13; 0 means 8.
	// It picks the form of the unique-lock key (8 to 10, 11, 12 and
	// later: see uniqueKey in versions.go); from 12 the Worker skips
	// queues that queue:pause paused, and from 13 it deletes debounced
	// jobs that a newer dispatch superseded.
	Laravel int
}

func (c *Config) setDefaults() {
	if c.RetryAfter == 0 {
		c.RetryAfter = 90 * time.Second
	}
	if c.MigrateLimit == 0 {
		c.MigrateLimit = 1000
	}
}

func (c Config) validate() error {
	switch {
	case c.RetryAfter < time.Second || c.RetryAfter%time.Second != 0:
		return fmt.Errorf("%w: laravel.Config.RetryAfter (%v) must be a whole number of seconds, at least 1s: Laravel's scores are unix seconds", runtime.ErrInvalid, c.RetryAfter)
	case c.BlockFor < 0 || c.BlockFor%time.Second != 0 && c.BlockFor > 0:
		return fmt.Errorf("%w: laravel.Config.BlockFor (%v) must be a whole number of seconds", runtime.ErrInvalid, c.BlockFor)
	case c.MigrateLimit < 1 || c.MigrateLimit > 1000:
		return fmt.Errorf("%w: laravel.Config.MigrateLimit (%d) must be 1 to 1000", runtime.ErrInvalid, c.MigrateLimit)
	case strings.ContainsAny(c.Prefix, "{}"):
		return fmt.Errorf("%w: laravel.Config.Prefix %q must not contain { or }", runtime.ErrInvalid, c.Prefix)
	}
	return checkLaravel(c.Laravel)
}

// Queue speaks Laravel's Redis queue layout: the operations of
// Illuminate\Queue\RedisQueue, each one Lua script (the lua directory),
// on the keys Laravel uses, so Laravel's workers and producers share the
// queues with it. It is safe for concurrent use.
//
// It is weaker than runtime.Engine, because the layout is Laravel's: a
// reservation is the reserved payload itself, with no fencing token, so
// a worker whose retry_after ran out cannot tell another worker's
// attempt from its own beyond "the payload is no longer reserved"; and
// it has no heartbeat of its own (Worker extends reservations of running
// jobs, which Laravel tolerates). Scores are unix seconds.
type Queue struct {
	rdb redis.UniversalClient
	cfg Config

	poppersMu sync.Mutex
	poppers   map[string]*popper // by queue name
}

// NewQueue returns a Queue on rdb.
func NewQueue(rdb redis.UniversalClient, cfg Config) (*Queue, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Queue{rdb: rdb, cfg: cfg, poppers: map[string]*popper{}}, nil
}

// Client returns the Redis client.
func (q *Queue) Client() redis.UniversalClient { return q.rdb }

// Config returns the configuration, with defaults filled in.
func (q *Queue) Config() Config { return q.cfg }

func (q *Queue) keys(queue string) queueKeys { return keysFor(q.cfg.Prefix, queue, q.cfg.HashTag) }

// Push adds payloads to the end of queue, ready now.
func (q *Queue) Push(ctx context.Context, queue string, payloads ...[]byte) error {
	k := q.keys(queue)
	for len(payloads) > 0 {
		n := min(len(payloads), 1000)
		args := make([]any, n)
		for i, p := range payloads[:n] {
			args[i] = p
		}
		if err := q.run(ctx, scriptPush, []string{k.Ready, k.Notify}, args...).Err(); err != nil {
			return fmt.Errorf("push to Laravel queue %q: %w", queue, err)
		}
		payloads = payloads[n:]
	}
	return nil
}

// Later adds payloads to queue's delayed set, due after delay, rounded
// up to a whole second.
func (q *Queue) Later(ctx context.Context, queue string, delay time.Duration, payloads ...[]byte) error {
	k := q.keys(queue)
	secs := seconds(delay)
	for len(payloads) > 0 {
		n := min(len(payloads), 1000)
		args := make([]any, 0, n+1)
		args = append(args, secs)
		for _, p := range payloads[:n] {
			args = append(args, p)
		}
		if err := q.run(ctx, scriptLater, []string{k.Delayed}, args...).Err(); err != nil {
			return fmt.Errorf("push delayed to Laravel queue %q: %w", queue, err)
		}
		payloads = payloads[n:]
	}
	return nil
}

// seconds rounds d up to whole seconds, 0 for d <= 0.
func seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// Migrate moves queue's due delayed jobs and expired reservations to its
// ready list, at most MigrateLimit of each.
func (q *Queue) Migrate(ctx context.Context, queue string) (delayed, expired int, err error) {
	k := q.keys(queue)
	v, err := q.run(ctx, scriptMigrate, []string{k.Delayed, k.Reserved, k.Ready, k.Notify}, q.cfg.MigrateLimit).Int64Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("migrate Laravel queue %q: %w", queue, err)
	}
	return int(v[0]), int(v[1]), nil
}

// Reserved is a job popped from a Laravel queue.
type Reserved struct {
	// Queue is the queue it was popped from.
	Queue string
	// Raw is the payload as it was pushed.
	Raw []byte
	// Reserved is the payload as the reserved set holds it, byte for
	// byte: the key to delete, release or extend the job.
	Reserved []byte
	// Payload is Reserved decoded, its Attempts counting this pop; zero
	// if DecodeErr is set.
	Payload Payload
	// DecodeErr is set for a payload that does not decode; such a job
	// is reserved as it was pushed, for the worker to fail.
	DecodeErr error
}

// Pop migrates queue, then reserves its first ready job for RetryAfter,
// as RedisQueue::pop does; with BlockFor set it waits that long for one.
// It returns nil when the queue has no ready job, and an error matching
// ErrContended when other workers kept taking the jobs it tried for.
func (q *Queue) Pop(ctx context.Context, queue string) (*Reserved, error) {
	r, _, err := q.popWhere(ctx, queue, nil)
	return r, err
}

// popWhere is Pop that reserves only a job that take accepts (nil:
// any). A first job it does not accept is left where it is, untouched,
// and left says so: the jobs behind it wait for another worker to take
// it, as on any Laravel queue, whose jobs are taken from the front.
func (q *Queue) popWhere(ctx context.Context, queue string, take func(job []byte) bool) (r *Reserved, left bool, err error) {
	if _, _, err := q.Migrate(ctx, queue); err != nil {
		return nil, false, err
	}
	r, left, err = q.pop(ctx, queue, take)
	if r != nil || left || err != nil || q.cfg.BlockFor <= 0 {
		return r, left, err
	}
	k := q.keys(queue)
	err = q.rdb.BLPop(ctx, q.cfg.BlockFor, k.Notify).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("wait on Laravel queue %q: %w", queue, err)
	}
	return q.pop(ctx, queue, take)
}

// maxPopTries bounds the calls of one pop. A call fails only when other
// workers took every job it expected, so each failure is progress for
// someone else.
const maxPopTries = 32

// maxExpectBytes bounds the jobs a pop offers the script after a miss:
// it offers each of the first jobs the script returned (up to 8) while
// their bytes add up to no more than this, and always the first.
const maxExpectBytes = 1 << 20

// ErrContended is the error of a pop that found, maxPopTries times in a
// row, that other workers had taken the jobs it was about to reserve. No
// job is lost or reserved by it; the caller may pop again.
var ErrContended = errors.New("laravel: other workers kept taking the first jobs first")

// popper is one queue's pop state in this process: a lock, so that the
// process reserves one job of the queue at a time, and the first ready
// job as the last pop left it, for the next pop to expect.
type popper struct {
	lock chan struct{}
	next []byte
	has  bool
}

func (q *Queue) popperFor(queue string) *popper {
	q.poppersMu.Lock()
	defer q.poppersMu.Unlock()
	p, ok := q.poppers[queue]
	if !ok {
		p = &popper{lock: make(chan struct{}, 1)}
		q.poppers[queue] = p
	}
	return p
}

// expected is a job a pop expects first, and the payload it reserves it
// as.
type expected struct {
	job, reserved []byte
	ok            bool // reserved has attempts one more
}

func expect(job []byte) expected {
	reserved, ok := bumpAttempts(job)
	if !ok {
		reserved = bytes.Clone(job)
	}
	return expected{job: job, reserved: reserved, ok: ok}
}

// pop reserves the first ready job, with its attempts one more. The
// count is raised here, in Go, so that the pop script keeps payloads
// opaque: the script reserves the first job only if it is byte-equal to
// a job it is told to expect, with the payload built from that job, and
// otherwise returns the first jobs to try again with. Each reservation
// returns the job after it, which the next pop expects, so a process
// that drains a queue alone takes one call a pop; the per-queue lock
// keeps this process's goroutines from racing each other for one job.
//
// take, if not nil, says which jobs the caller reserves: a first job it
// refuses is left untouched, and left is true.
func (q *Queue) pop(ctx context.Context, queue string, take func(job []byte) bool) (r *Reserved, left bool, err error) {
	p := q.popperFor(queue)
	select {
	case p.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, false, fmt.Errorf("pop from Laravel queue %q: %w", queue, ctx.Err())
	}
	defer func() { <-p.lock }()
	var want []expected
	if p.has && (take == nil || take(p.next)) {
		want = append(want, expect(p.next))
	}
	p.next, p.has = nil, false
	k := q.keys(queue)
	keys := []string{k.Ready, k.Reserved, k.Notify}
	args := []any{seconds(q.cfg.RetryAfter)}
	for range maxPopTries {
		args = args[:1]
		for _, e := range want {
			args = append(args, e.job, e.reserved)
		}
		v, err := q.run(ctx, scriptPop, keys, args...).Slice()
		if err != nil {
			return nil, false, fmt.Errorf("pop from Laravel queue %q: %w", queue, err)
		}
		if len(v) == 0 {
			return nil, false, nil
		}
		status, _ := v[0].(string)
		if status == "moved" {
			if want, left = expectFirst(want[:0], v[1:], take); left {
				return nil, true, nil
			}
			continue
		}
		var i int64
		if len(v) > 1 {
			i, _ = v[1].(int64)
		}
		if status != "reserved" || i < 1 || int(i) > len(want) {
			return nil, false, fmt.Errorf("pop from Laravel queue %q: unexpected reply %v", queue, v)
		}
		if len(v) > 2 {
			s, _ := v[2].(string)
			p.next, p.has = []byte(s), true
		}
		return want[i-1].reserve(queue), false, nil
	}
	return nil, false, fmt.Errorf("pop from Laravel queue %q: %w", queue, ErrContended)
}

// expectFirst appends to want the first jobs, as the pop script returned
// them, that take accepts (all if take is nil), up to maxExpectBytes but
// always the first. left is true, and want empty, when take refuses the
// first job: it is left where it is.
func expectFirst(want []expected, first []any, take func(job []byte) bool) (_ []expected, left bool) {
	size := 0
	for i, j := range first {
		s, _ := j.(string)
		ok := take == nil || take([]byte(s))
		if i == 0 && !ok {
			return want[:0], true
		}
		if size += len(s); len(want) > 0 && size > maxExpectBytes {
			break
		}
		if ok {
			want = append(want, expect([]byte(s)))
		}
	}
	return want, false
}

// reserve is the Reserved of e, popped from queue.
func (e expected) reserve(queue string) *Reserved {
	r := &Reserved{Queue: queue, Raw: e.job, Reserved: e.reserved}
	if !e.ok {
		r.DecodeErr = fmt.Errorf("laravel payload: not a JSON object with numeric attempts: %.200q", e.job)
		return r
	}
	r.Payload, r.DecodeErr = DecodePayload(r.Reserved)
	return r
}

// ErrNotReserved is the error of Delete, Release and Extend for a job
// that is no longer reserved under its payload: its retry_after ran out
// and it went back to the queue, perhaps to another worker.
var ErrNotReserved = errors.New("laravel: job is no longer reserved (its retry_after ran out)")

// Delete removes a finished job from the reserved set
// (RedisQueue::deleteReserved).
func (q *Queue) Delete(ctx context.Context, r *Reserved) error {
	n, err := q.run(ctx, scriptDelete, []string{q.keys(r.Queue).Reserved}, r.Reserved).Int64()
	if err != nil {
		return fmt.Errorf("delete job from Laravel queue %q: %w", r.Queue, err)
	}
	if n == 0 {
		return ErrNotReserved
	}
	return nil
}

// Release puts a reserved job back in the delayed set, due after delay
// rounded up to a whole second, with the attempts of its reservation
// (RedisQueue::deleteAndRelease).
func (q *Queue) Release(ctx context.Context, r *Reserved, delay time.Duration) error {
	k := q.keys(r.Queue)
	n, err := q.run(ctx, scriptRelease, []string{k.Delayed, k.Reserved}, r.Reserved, seconds(delay)).Int64()
	if err != nil {
		return fmt.Errorf("release job on Laravel queue %q: %w", r.Queue, err)
	}
	if n == 0 {
		return ErrNotReserved
	}
	return nil
}

// Extend pushes a reservation forward to lease from now (rounded up to a
// whole second), with ZADD XX: a job that runs longer than retry_after
// is then not migrated back while it runs.
func (q *Queue) Extend(ctx context.Context, r *Reserved, lease time.Duration) error {
	n, err := q.run(ctx, scriptExtend, []string{q.keys(r.Queue).Reserved}, r.Reserved, max(seconds(lease), 1)).Int64()
	if err != nil {
		return fmt.Errorf("extend job on Laravel queue %q: %w", r.Queue, err)
	}
	if n == 0 {
		return ErrNotReserved
	}
	return nil
}

// Sizes are the jobs of a queue by state.
type Sizes struct {
	Ready, Delayed, Reserved int64
}

// Total is Laravel's size(): every job of the queue.
func (s Sizes) Total() int64 { return s.Ready + s.Delayed + s.Reserved }

// Sizes returns the jobs of queue by state.
func (q *Queue) Sizes(ctx context.Context, queue string) (Sizes, error) {
	k := q.keys(queue)
	v, err := q.run(ctx, scriptSizes, []string{k.Ready, k.Delayed, k.Reserved}).Int64Slice()
	if err != nil {
		return Sizes{}, fmt.Errorf("size of Laravel queue %q: %w", queue, err)
	}
	return Sizes{Ready: v[0], Delayed: v[1], Reserved: v[2]}, nil
}

// RestartMark returns the time of Laravel's last queue:restart, as its
// cache holds it, and false if CachePrefix is not set or there was none.
func (q *Queue) RestartMark(ctx context.Context) (int64, bool, error) {
	if q.cfg.CachePrefix == "" {
		return 0, false, nil
	}
	s, err := q.rdb.Get(ctx, q.cfg.CachePrefix+restartKey).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read Laravel's queue:restart signal: %w", err)
	}
	return restartValue(s)
}
