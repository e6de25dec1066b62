// Package console is jobgen's queue command line, with the names of
// Laravel's artisan queue commands: queue:work, queue:failed,
// queue:retry and the rest.
//
// # Two ways in
//
// The jobgen binary runs every command that needs no job handlers:
//
//	jobgen queue:size --redis redis://127.0.0.1:6379/0
//	jobgen queue:retry all
//
// queue:work runs the application's handlers, so it runs from the
// application's own binary, whose main registers them and hands the
// command line to Main:
//
//	func main() {
//		r := runtime.NewRouter()
//		jobs.Register(r, jobs.Mailer{...})
//		console.Main(r)
//	}
//
// That binary then runs every command, queue:work included:
//
//	myapp queue:work --queue high,default,low --concurrency 20
//
// A program with commands of its own hands over only these:
//
//	if console.Handles(os.Args[1:]) {
//		console.Main(r)
//	}
//
// An application whose jobs are encrypted gives Main the configuration it
// dispatches with, key ring included, so that its workers open them:
//
//	ring, err := runtime.ParseKeyRing(os.Getenv("APP_KEYS"))
//	...
//	cfg := runtime.EngineConfig{Prefix: "myapp", Keys: ring}
//	console.Main(r, console.WithEngine(cfg), console.WithWorker(runtime.WorkerConfig{Concurrency: 32}))
//
// Both ways run the same code, this package. A Command sets the program
// name, streams, environment and base configurations for one run, what
// Main's options set and more:
//
//	c := &console.Command{
//		Router: r,
//		Engine: runtime.EngineConfig{Prefix: "myapp", Keys: ring},
//		Worker: runtime.WorkerConfig{Concurrency: 32, Logger: logger},
//	}
//	os.Exit(c.Run(context.Background(), os.Args[1:]))
//
// # Commands
//
//	queue:work          process jobs until stopped; every runtime.WorkerConfig
//	                    option is a flag: --queue, --concurrency, --sleep,
//	                    --rest, --tries, --backoff 1s,5s,30s or exp:1s,5m,
//	                    --timeout, --retry-after, --max-jobs, --max-time,
//	                    --memory, --once, --stop-when-empty, --name, --grace
//	queue:failed        list failed jobs, newest first, as a table
//	queue:retry         push failed jobs back: IDs, all, or --queue q
//	queue:forget        delete failed jobs by ID
//	queue:flush         delete every failed job
//	queue:prune-failed  delete failed jobs older than --hours (default 24)
//	queue:job ID        a job's state, attempts, progress and attempts'
//	                    errors
//	queue:cancel ID     cancel a waiting, delayed or running job; it goes
//	                    to the failed store, marked cancelled
//	queue:workflow ID   a workflow's state and its steps as a table
//	queue:workflow-cancel ID, queue:workflow-retry ID
//	                    cancel a running workflow; run a failed or
//	                    cancelled one again from the steps that did not
//	                    succeed
//	queue:push NAME     push a job by wire name, its fields as --json
//	                    '{...}', from the binary that knows its type
//	queue:clear         delete the pending jobs of queues
//	queue:restart       make every worker exit after its running jobs
//	queue:pause         stop workers taking jobs from queues
//	queue:resume        undo queue:pause
//	queue:limit Q [N]   show or set a queue's concurrency limit (N, off)
//	                    and rate (--rate 100/1s, off)
//	queue:size          jobs per queue: ready, delayed, reserved, failed
//	queue:monitor       sizes against --max and --max-failed, waits against
//	                    --max-wait, the outbox against --max-outbox-age and
//	                    --max-relay-idle, failed jobs trimmed against
//	                    --failed-trimmed-within; exits 1 over
//	queue:metrics       each job class's runtime p50/p95 and throughput over
//	                    the last hour and day (EngineConfig.KeepFinished)
//	schedule:work       dispatch the schedule's jobs as they fall due, until
//	                    stopped; queue:work --schedule does it in a worker
//	schedule:run        one pass over the schedule, for a system cron
//	schedule:list       entries, paused or not, next tick in their zone,
//	                    last run
//	schedule:test NAME  dispatch one entry now
//	schedule:pause NAME stop one entry dispatching, in every process
//	schedule:resume NAME
//	                    undo schedule:pause
//	dashboard           serve the web dashboard (package dashboard) on
//	                    --addr (default 127.0.0.1:8080); --read-only
//
// Without --queue, the failed-job commands and queue:size and
// queue:monitor cover every queue that has been dispatched to
// (runtime.Inspector.Queues). "help" lists the commands and
// "<command> --help" describes one.
//
// queue:work runs runtime.Worker.RunWithSignals: SIGTERM or Ctrl-C
// stops it gracefully, SIGUSR2 pauses it and SIGCONT resumes it. It sets
// its engine as runtime's default dispatcher if none is set, for
// handlers that dispatch jobs.
//
// The worker has one log, through log/slog, on Stdout: each change of a
// job's state is one record (see runtime's Logs), and so are the
// worker's warnings and errors, so a failure is told once. In the text
// format (--log-format text, the default) a slog handler prints a job's
// record as a line such as
//
//	2026-05-01 10:00:00 DONE     emails main.SendEmail 01JT... 12ms
//	2026-05-01 10:00:00 FAILED   emails main.SendEmail 01JT... attempt 3: smtp: refused
//
// and others as "time LEVEL message key=value...". --log-format json
// writes JSON objects instead, one a line, the start and stop lines
// included. By default the finished, released, retried and failed jobs
// and the records at Info and above are logged; --quiet leaves out the
// jobs that went well; --log-level debug|info|warn|error sets the level
// outright. A Command.Worker.Logger set by the program replaces all of
// this.
//
// The schedule: commands run the application's schedule.Schedule, given
// with WithSchedule (Command.Schedule), so they run from its own binary:
//
//	s := schedule.New()
//	s.DailyAt("03:00", jobs.PruneCarts{}).Timezone("Europe/Paris")
//	console.Main(r, console.WithSchedule(s))
//
// Any number of schedule:work processes (or workers with --schedule, or
// schedule:run from cron) may run at once: each tick is dispatched once.
//
// # Connection
//
// The Redis URL comes from --redis, else the JOBGEN_REDIS_URL environment
// variable (runtime.URLEnv, the one the application dispatches with),
// else REDIS_URL; any form
// runtime.Open takes. --prefix sets the key prefix (default "jobgen"),
// which must match the application's runtime.EngineConfig.Prefix, and
// --partitions emails=3 the partitioned queues of its
// EngineConfig.Partitions, so that the commands act on every partition.
//
// # Output and exit status
//
// Results go to Stdout. Progress of long operations (retrying, deleting
// or pruning many failed jobs) goes to Stderr. An error is one line on
// Stderr, "program command: message"; go-redis's own log lines (a failed
// dial, say) go to Command.Worker.Logger at Debug level, or are dropped,
// not printed to Stderr.
// The exit status is 0 on success, 1 when the command failed or
// queue:monitor found a queue over its threshold, and 2 for bad usage.
package console
