package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/jobgen/jobgen/runtime"
)

var workVerb = &verb{
	name:        "queue:work",
	summary:     "Process jobs from the queues until stopped",
	maxArgs:     0,
	needsRouter: true,
	about: `Run a worker: reserve jobs from the queues, in priority order, and run
them through the application's handlers, retrying them on the backoff
schedule and moving those that run out of tries to the failed store.
SIGTERM or Ctrl-C stops it gracefully: it takes no new job and lets
running ones finish within --grace. SIGUSR2 pauses it, SIGCONT resumes
it; queue:restart stops every worker under the prefix.

Durations are Go durations (90s, 1m30s) or a number of seconds (90).
Everything the worker logs goes to Stdout as one stream: a line per
finished, released, retried or failed job, and the worker's warnings and
errors. --quiet leaves out the lines of jobs that went well (Info and
above); --log-level debug adds each job's start and the rest of the
Debug log; --log-format json writes it all as JSON, one object a line.`,
	setup: setupWork,
}

func setupWork(c *Command, fs *flags) func(context.Context, *session) error {
	cfg, quiet := workerFlags(c, fs)
	sched := new(bool)
	fs.boolVar(sched, "schedule", false, "also run the application's schedule, as schedule:work does (console.WithSchedule)")
	relay := new(bool)
	fs.boolVar(relay, "relay", false, "also relay the outbox to Redis, as queue:relay does (console.WithOutbox)")
	rc := relayFlags(fs)
	lf := logFlags(fs)
	return func(ctx context.Context, s *session) error {
		splitWeights(cfg)
		if *relay {
			if s.c.Outbox == nil || s.c.Outbox.DB == nil {
				return errNoOutbox
			}
			s.out = &lockedWriter{w: s.out}
			log, err := lf.logger(s.out)
			if err != nil {
				return err
			}
			stop := s.startRelay(ctx, *rc, log)
			defer func() {
				if err := stop(); err != nil {
					fmt.Fprintf(s.errOut, "%s: %s\n", s.verb.name, oneLine(err))
				}
			}()
		}
		if *sched {
			// The worker and the schedule print lines to the same stream.
			s.out = &lockedWriter{w: s.out}
			stop, err := s.runSchedule(ctx, *quiet)
			if err != nil {
				return err
			}
			defer stop()
		}
		lf.quiet = *quiet
		return s.work(ctx, *cfg, *lf)
	}
}

// splitWeights reads --queue critical:6,default:3,low:1 (asynq's
// spelling) as queues with weights (WorkerConfig.Weights) when every
// queue named ends in ":" and a whole number; otherwise the names stand
// as they are, colons and all, in strict order.
func splitWeights(cfg *runtime.WorkerConfig) {
	if len(cfg.Queues) == 0 || cfg.Weights != nil {
		return
	}
	names := make([]string, len(cfg.Queues))
	weights := make(map[string]int, len(cfg.Queues))
	for i, q := range cfg.Queues {
		j := strings.LastIndexByte(q, ':')
		if j <= 0 {
			return
		}
		n, err := strconv.Atoi(q[j+1:])
		if err != nil || n < 1 {
			return
		}
		names[i] = q[:j]
		weights[q[:j]] = n
	}
	cfg.Queues, cfg.Weights = names, weights
}

// workerFlags declares queue:work's flags, one per WorkerConfig field,
// and returns the configuration they fill in, starting from c.Worker.
func workerFlags(c *Command, fs *flags) (cfg *runtime.WorkerConfig, quiet *bool) {
	cfg = new(runtime.WorkerConfig)
	*cfg = c.Worker
	cfg.Queues = append([]string(nil), cfg.Queues...)
	fs.queuesVar(&cfg.Queues, "the queues to work, highest priority first; or each with a weight, high:6,default:3,low:1, for weighted order", `"default"`)
	fs.meta["queue"] = "high,default,low"
	fs.intVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "jobs run at once", "10")
	fs.intVar(&cfg.Prefetch, "prefetch", cfg.Prefetch, "reserved jobs that may wait for a free slot (faster with quick jobs; their attempts count as they start)", "0")
	fs.durationVar(&cfg.Sleep, "sleep", "longest wait for a job before checking again (a push wakes the worker at once)", "1s")
	fs.durationVar(&cfg.Rest, "rest", "pause after each job", "")
	fs.intVar(&cfg.Tries, "tries", cfg.Tries, "attempts of a job that sets none", "1")
	fs.Var(backoffValue{&cfg.Backoff, &cfg.ExponentialBackoff}, "backoff",
		"delays before the retries of a job that sets none, the last repeating; or exp:BASE,MAX for BASE*2^(n-1), at most MAX")
	fs.add("backoff", "no delay")
	fs.meta["backoff"] = "1s,5s,30s"
	fs.durationVar(&cfg.Timeout, "timeout", "limit of one attempt of a job that sets none; must be shorter than --retry-after", "60s")
	fs.durationVar(&cfg.RetryAfter, "retry-after", "reservation lease: a job whose worker stops renewing it this long goes to another worker", "90s")
	fs.intVar(&cfg.MaxJobs, "max-jobs", cfg.MaxJobs, "stop after processing this many jobs", "")
	fs.durationVar(&cfg.MaxTime, "max-time", "stop after running this long", "")
	fs.intVar(&cfg.Memory, "memory", cfg.Memory, "stop when the Go heap passes this many MB", "")
	fs.meta["memory"] = "MB"
	fs.boolVar(&cfg.Once, "once", cfg.Once, "process a single job, then stop")
	fs.boolVar(&cfg.StopWhenEmpty, "stop-when-empty", cfg.StopWhenEmpty, "stop once the queues have no ready job and the worker's jobs have finished; delayed jobs are not waited for")
	fs.stringVar(&cfg.Name, "name", cfg.Name, "the worker's name in logs and output", `"worker"`)
	fs.meta["name"] = "NAME"
	fs.durationVar(&cfg.Grace, "grace", "how long running jobs may finish after a stop before they are cancelled and released", "30s")
	quiet = new(bool)
	fs.boolVar(quiet, "quiet", false, "log no line for jobs that went well (--log-level info)")
	return cfg, quiet
}

// workLog is how queue:work logs: its flags.
type workLog struct {
	format, level string
	quiet         bool
}

// logFlags declares queue:work's flags for its log.
func logFlags(fs *flags) *workLog {
	l := &workLog{}
	fs.stringVar(&l.format, "log-format", "text", "text, lines for people, or json, one JSON object a line", "")
	fs.meta["log-format"] = "text|json"
	fs.stringVar(&l.level, "log-level", "", "debug, info, warn or error; default a line per finished job and Info and above", "")
	fs.meta["log-level"] = "LEVEL"
	return l
}

// logger returns the logger of a worker that writes to w, or an error
// for a flag it does not know.
func (l workLog) logger(w io.Writer) (*slog.Logger, error) {
	var h slog.Handler
	switch l.format {
	case "text", "":
		h = newHumanHandler(w)
	case "json":
		h = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	default:
		return nil, fmt.Errorf("%w: --log-format %q: want text or json", runtime.ErrInvalid, l.format)
	}
	f := levelFilter{Handler: h, min: slog.LevelInfo, jobLines: !l.quiet}
	if l.level != "" {
		if err := f.min.UnmarshalText([]byte(l.level)); err != nil {
			return nil, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", runtime.ErrInvalid, l.level)
		}
		f.jobLines = false
	}
	return slog.New(f), nil
}

// work runs a worker until it stops. Its log, the program's
// Worker.Logger or one made from the log flags, is its only output about
// jobs.
func (s *session) work(ctx context.Context, cfg runtime.WorkerConfig, lf workLog) error {
	if cfg.Logger == nil {
		l, err := lf.logger(s.out)
		if err != nil {
			return err
		}
		cfg.Logger = l
	}
	// Handlers that dispatch jobs of their own need a dispatcher.
	if _, err := runtime.DispatcherFor(ctx, ""); err != nil {
		runtime.SetDefaultDispatcher(s.engine)
	}
	// A callback the program defines but the router lacks would run on
	// no worker of this binary: refuse, as a missing handler does.
	if err := s.c.Router.CheckCallbacks(); err != nil {
		return err
	}
	w, err := runtime.NewWorker(s.engine, s.c.Router, cfg)
	if err != nil {
		return err
	}
	counts := &jobCounts{}
	w.Subscribe(counts.add)
	// "Worker mail-1 processing…", or "Worker processing…" unnamed.
	label, queues := "Worker", cfg.Queues
	if cfg.Name != "" {
		label += " " + cfg.Name
	}
	if len(queues) == 0 {
		queues = []string{runtime.DefaultQueue}
	}
	say := func(format string, args ...any) {
		if lf.format == "json" { // Stdout is all JSON
			cfg.Logger.Info(fmt.Sprintf(format, args...))
			return
		}
		fmt.Fprintf(s.out, format+"\n", args...)
	}
	say("%s processing queues %s. Stop it with Ctrl-C or SIGTERM.", label, strings.Join(queues, ", "))
	if err := w.RunWithSignals(ctx); err != nil {
		return err
	}
	// Jobs given back at the stop go back to their queues, to run again.
	counts.returned(w.Stats().Returned)
	say("%s stopped (%s): %s.", label, w.StopReason(), counts)
	return nil
}

// jobCounts counts the outcomes of a worker's attempts.
type jobCounts struct {
	mu                               sync.Mutex
	done, released, givenBack, fails int
}

func (n *jobCounts) add(ev runtime.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev.Kind {
	case runtime.JobProcessed:
		n.done++
	case runtime.JobReleased:
		if !errors.Is(ev.Err, runtime.ErrWorkerStopping) { // counted in WorkerStats.Returned
			n.released++
		}
	case runtime.JobFailed:
		n.fails++
	}
}

// returned counts the jobs the worker gave back at its stop, apart from
// the ones released for a retry.
func (n *jobCounts) returned(k int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.givenBack += int(k)
}

func (n *jobCounts) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.givenBack > 0 {
		return fmt.Sprintf("%d done, %d released for retry, %d given back at shutdown, %d failed", n.done, n.released, n.givenBack, n.fails)
	}
	return fmt.Sprintf("%d done, %d released for retry, %d failed", n.done, n.released, n.fails)
}
