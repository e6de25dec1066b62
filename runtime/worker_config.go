package runtime

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/jobgen/jobgen/internal/attempt"
	"github.com/jobgen/jobgen/internal/queueorder"
)

// WorkerConfig configures a Worker, with the names and meanings of
// Laravel's queue:work options. The zero value works on the "default"
// queue.
type WorkerConfig struct {
	// Name identifies the worker in logs and events. Default "worker".
	Name string
	// Queues are taken in strict priority order: a job of a later queue
	// is reserved only when every earlier queue has none ready.
	// Default ["default"].
	Queues []string
	// Weights, if set, takes Queues in weighted order instead of strict:
	// each reserve tries them in an order drawn at random, a queue first
	// with the chance of its weight over the sum (asynq's weighted
	// priority). Under load each queue gets its share of the jobs, and
	// none starves. Every queue of Queues needs a weight of 1 or more.
	// Default none: strict order.
	Weights map[string]int
	// Concurrency is how many jobs run at once, each in its own
	// goroutine. While its queues are busy a worker keeps up to two
	// reserves in flight, each for the slots freed while the other was
	// out; it never holds more jobs than Concurrency + Prefetch.
	// Default 10.
	Concurrency int
	// Prefetch is how many reserved jobs may wait for a free slot, so
	// reserving the next jobs overlaps with running these: with fast
	// handlers it roughly halves the round trips per job. Waiting jobs are
	// leased and heartbeated like running ones, and released at a stop.
	// With Prefetch the worker reserves jobs held: a job's attempt is
	// counted as it starts (one more call, for the jobs that start
	// together), not at reserve, so the jobs of a worker killed while they
	// waited come back with their attempts unused. That call comes before
	// each handler: with handlers that take microseconds, prefetch drains
	// slower than none (about 0.6× on loopback, docs/benchmarks.md); it
	// pays where Redis is far away and handlers take a while. Default 0
	// (off). A later high-priority job can wait behind at most this many
	// prefetched ones. -1 also means off.
	Prefetch int
	// Sleep is the longest the worker blocks waiting for a job when its
	// queues are empty before it checks them again. It is woken at once
	// by a push, so this is not a polling interval. Default 1s.
	Sleep time.Duration
	// Rest is a pause after each job before its slot takes another.
	Rest time.Duration
	// Tries is how many times a job is attempted, unless it sets its own.
	// Default 1. A job that set RetryUntil is retried until then instead.
	Tries int
	// Backoff lists the delays before each retry, unless the job sets its
	// own; the last one repeats. Default: no delay. Not with
	// ExponentialBackoff.
	Backoff []time.Duration
	// ExponentialBackoff, if set, delays retry n by Base * 2^(n-1), at
	// most Max, for jobs with no backoff of their own.
	ExponentialBackoff *ExponentialBackoff
	// Timeout limits one attempt of a job that sets none: its context's
	// deadline. Default 60s. It must be shorter than RetryAfter.
	Timeout time.Duration
	// RetryAfter is the reservation lease: a job whose worker stops
	// renewing it for this long is handed to another worker. The
	// heartbeat renews it every RetryAfter/3 while the job runs.
	// Default 90s.
	RetryAfter time.Duration
	// Grace is how long running handlers may finish after a stop
	// (SIGTERM, a cancelled context, a restart broadcast). When it runs
	// out, their contexts are cancelled and their jobs released.
	// Default 30s.
	Grace time.Duration
	// MaxJobs stops the worker after it has processed this many jobs.
	MaxJobs int
	// MaxTime stops the worker after it has run this long.
	MaxTime time.Duration
	// Memory stops the worker when its Go heap passes this many MB.
	Memory int
	// Once processes a single job, then stops.
	Once bool
	// StopWhenEmpty stops the worker once a reserve finds no ready job in
	// its queues and none of its own jobs is running or prefetched: its
	// jobs finish, and are acked, before Run returns, and a job one of
	// them makes ready (the next link of a chain, a retry with no
	// backoff) runs too. As with Laravel's --stop-when-empty, which stops
	// when a pop finds nothing, only ready jobs count: a delayed job runs
	// if it is due by then, but the worker does not wait for delayed jobs,
	// retries waiting out a backoff, jobs of paused queues or jobs
	// reserved by other workers.
	StopWhenEmpty bool
	// Middleware wraps every job the worker runs, the first outermost,
	// outside the job type's own (JobMiddleware).
	Middleware []Middleware
	// Logger receives the worker's logs. Default slog.Default().
	Logger *slog.Logger
	// Clock tells the time for the worker's own checks against
	// wall-clock times carried by jobs (RetryUntil). Due times and leases
	// come from the Redis clock and never from this. Default time.Now;
	// tests inject a skewed clock.
	Clock func() time.Time
	// MonitorEvery is how often the worker records itself in the
	// registry of live workers (Inspector.Workers) and adds the jobs it
	// finished to the per-minute counts (Inspector.Metrics), in one pipeline
	// of a few commands: never a round trip per job. A worker that stops
	// writing drops out of the registry five periods later (at least
	// 1s). Default 2s; negative turns both off.
	MonitorEvery time.Duration
}

// ExponentialBackoff delays retry n by Base * 2^(n-1), capped at Max.
type ExponentialBackoff struct {
	Base time.Duration
	Max  time.Duration
}

func (c *WorkerConfig) setDefaults() {
	if c.Name == "" {
		c.Name = "worker"
	}
	if len(c.Queues) == 0 {
		c.Queues = []string{DefaultQueue}
	}
	if c.Concurrency == 0 {
		c.Concurrency = 10
	}
	if c.Prefetch == -1 {
		c.Prefetch = 0
	}
	if c.Sleep == 0 {
		c.Sleep = time.Second
	}
	if c.Tries == 0 {
		c.Tries = 1
	}
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = 90 * time.Second
	}
	if c.Grace == 0 {
		c.Grace = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.MonitorEvery == 0 {
		c.MonitorEvery = 2 * time.Second
	}
}

// validate names the first bad field.
func (c *WorkerConfig) validate() error {
	for _, check := range []func() string{c.badQueues, c.badCounts, c.badBackoff, c.badTimes} {
		if msg := check(); msg != "" {
			return fmt.Errorf("%w: WorkerConfig.%s", ErrInvalid, msg)
		}
	}
	return nil
}

// The checks of validate: each names the first bad field it checks, or
// returns "".

func (c *WorkerConfig) badQueues() string { return queueorder.Check(c.Queues, c.Weights) }

func (c *WorkerConfig) badCounts() string {
	switch {
	case c.Concurrency < 1:
		return fmt.Sprintf("Concurrency (%d) must be at least 1", c.Concurrency)
	case c.Prefetch < 0:
		return fmt.Sprintf("Prefetch (%d) must be 0 or more (-1 also means off)", c.Prefetch)
	case c.Tries < 0:
		return fmt.Sprintf("Tries (%d) must not be negative", c.Tries)
	case c.MaxJobs < 0:
		return fmt.Sprintf("MaxJobs (%d) must not be negative", c.MaxJobs)
	case c.Memory < 0:
		return fmt.Sprintf("Memory (%d) must not be negative", c.Memory)
	}
	return ""
}

func (c *WorkerConfig) badBackoff() string {
	switch e := c.ExponentialBackoff; {
	case len(c.Backoff) > 0 && e != nil:
		return "Backoff and ExponentialBackoff are both set; choose one"
	case e != nil && (e.Base <= 0 || e.Max < e.Base):
		return fmt.Sprintf("ExponentialBackoff (base %v, max %v) needs 0 < Base <= Max", e.Base, e.Max)
	}
	for i, d := range c.Backoff {
		if d < 0 {
			return fmt.Sprintf("Backoff[%d] (%v) must not be negative", i, d)
		}
	}
	return ""
}

func (c *WorkerConfig) badTimes() string {
	switch {
	case c.Sleep < time.Millisecond:
		return fmt.Sprintf("Sleep (%v) must be at least 1ms", c.Sleep)
	case c.Rest < 0:
		return fmt.Sprintf("Rest (%v) must not be negative", c.Rest)
	case c.RetryAfter < 10*time.Millisecond:
		return fmt.Sprintf("RetryAfter (%v) must be at least 10ms", c.RetryAfter)
	case c.Timeout <= 0:
		return fmt.Sprintf("Timeout (%v) must be positive", c.Timeout)
	case c.Timeout >= c.RetryAfter:
		return fmt.Sprintf("Timeout (%v) must be shorter than RetryAfter (%v), or a job could run twice at once", c.Timeout, c.RetryAfter)
	case c.Grace < 0:
		return fmt.Sprintf("Grace (%v) must not be negative", c.Grace)
	case c.MaxTime < 0:
		return fmt.Sprintf("MaxTime (%v) must not be negative", c.MaxTime)
	}
	return ""
}

// backoff returns the delay before the retry that follows attempt.
func (c *WorkerConfig) backoff(env *Envelope, n int) time.Duration {
	list := env.Backoff
	if len(list) == 0 {
		if e := c.ExponentialBackoff; e != nil {
			return attempt.Exponential(e.Base, e.Max, n)
		}
		list = c.Backoff
	}
	return attempt.Backoff(list, n)
}

// ParseBackoff parses a comma-separated list of durations, such as
// "1s,5s,30s".
func ParseBackoff(s string) ([]time.Duration, error) {
	d, err := attempt.ParseBackoff(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return d, nil
}
