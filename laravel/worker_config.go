package laravel

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// WorkerConfig configures a Worker: the options of Laravel's queue:work.
type WorkerConfig struct {
	// Queues in strict priority order (--queue). Default "default".
	Queues []string
	// Concurrency is how many jobs run at once, each popped by its own
	// loop. Default 1, as one Laravel worker process.
	Concurrency int
	// Sleep is the wait after finding every queue empty (--sleep).
	// Default 3s, as Laravel's. A Queue with BlockFor waits on the first
	// queue's notify list instead.
	Sleep time.Duration
	// Tries is the attempts of a job whose payload sets no maxTries
	// (--tries). Default 1, as Laravel's; negative means no limit.
	Tries int
	// Backoff is the delays before retries of a job whose payload sets no
	// backoff (--backoff); the last repeats. Default none. Whole seconds.
	Backoff []time.Duration
	// Timeout limits an attempt of a job whose payload sets no timeout
	// (--timeout). Default 60s. Laravel wants it shorter than
	// retry_after; the Go worker extends the reservations of running
	// jobs, so a longer one is safe while the worker lives.
	Timeout time.Duration
	// MaxJobs stops the worker after this many jobs (--max-jobs).
	MaxJobs int
	// StopWhenEmpty stops each loop when it finds every queue empty
	// (--stop-when-empty).
	StopWhenEmpty bool
	// Name names the worker in logs.
	Name string
	// Grace is how long running jobs may finish after Run's context ends
	// (--grace); then they are cancelled, and their reservations left to
	// retry_after. Default 0: cancelled at once. A queue:restart,
	// MaxJobs or StopWhenEmpty lets them finish whatever Grace is.
	Grace time.Duration
	// FailUnmapped fails at once a job whose class no Go type is mapped
	// to, or that only Laravel's worker can finish (a link of a chain
	// with catch callbacks, a chain with a link Go cannot continue, a job
	// of a batch), for queues that only Go workers serve. By default such
	// a job is left on its queue, untouched and with its attempts
	// unchanged, for a PHP worker to take: the worker logs each class
	// (and reason) once, counts the times it found one first
	// (Worker.Unmapped, Worker.LeftForPHP), and looks again after at most
	// UnmappedPoll. A payload that is no job at all is failed either way.
	FailUnmapped bool
	// FailedJobs, if set, is the application's failed_jobs table: jobs
	// that fail for good on the Go side are written there, where php
	// artisan queue:failed lists them and queue:retry puts them back.
	FailedJobs *FailedJobs
	// Failed is where jobs that fail for good are kept otherwise, with
	// their payloads, to list and retry (jobgen's queue:failed,
	// queue:retry). One of Failed and FailedJobs is required.
	Failed *runtime.FailedStore
	// FailedQueue is the queue of the failed store that failures are kept
	// under; default "laravel". Retry pushes them back there, where a
	// jobgen worker with RegisterRequeue puts them back on their Laravel
	// queue.
	FailedQueue string
	// Logger receives the worker's warnings. Default slog.Default().
	Logger *slog.Logger
}

func (c *WorkerConfig) setDefaults() {
	if len(c.Queues) == 0 {
		c.Queues = []string{"default"}
	}
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.Sleep == 0 {
		c.Sleep = 3 * time.Second
	}
	if c.Tries == 0 {
		c.Tries = 1
	}
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.FailedQueue == "" {
		c.FailedQueue = "laravel"
	}
	if c.FailedJobs != nil {
		f := *c.FailedJobs
		f.setDefaults()
		c.FailedJobs = &f
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

func (c WorkerConfig) validate() error {
	switch {
	case c.Concurrency < 1:
		return fmt.Errorf("%w: laravel.WorkerConfig.Concurrency (%d) must be at least 1", runtime.ErrInvalid, c.Concurrency)
	case c.Grace < 0:
		return fmt.Errorf("%w: laravel.WorkerConfig.Grace (%v) must not be negative", runtime.ErrInvalid, c.Grace)
	case c.Failed == nil && c.FailedJobs == nil:
		return fmt.Errorf("%w: laravel.WorkerConfig.Failed or FailedJobs is required: jobs that fail for good go to the app's failed_jobs table (laravel.FailedJobs) or a jobgen failed store (runtime.NewInspector(engine).Failed())", runtime.ErrInvalid)
	}
	if c.FailedJobs != nil {
		if err := c.FailedJobs.validate(); err != nil {
			return err
		}
	}
	for _, name := range c.Queues {
		if name == "" {
			return fmt.Errorf("%w: laravel.WorkerConfig.Queues has an empty name", runtime.ErrInvalid)
		}
	}
	return runtime.ValidateQueueName(c.FailedQueue)
}
