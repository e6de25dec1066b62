// Command jobgen generates typed background jobs from annotated structs.
//
// # Annotating jobs
//
// A job is a struct whose doc comment has a //job: line:
//
//	// SendEmail sends one email.
//	//
//	//job:queue=emails tries=5 backoff=10s,1m timeout=30s
//	type SendEmail struct {
//		To      string
//		Subject string
//	}
//
// The line is key=value pairs separated by spaces (not commas); values
// hold no spaces. A long annotation may go on several //job: lines.
// Write no space after "//" or after the colon: "//job:queue=x" is a
// directive comment, which gofmt keeps as it is, while "//job: queue=x"
// would become a plain comment, so jobgen reports it. A bare "//job:",
// which gofmt rewrites to "// job:", means all defaults; both forms are
// accepted. A line that looks like a mistyped annotation, such as
// "//jobs:", "//Job:queue=x", "// job:queue=x" or "//job queue=x", is an
// error that shows the line as it should be, never a comment skipped
// without a word. The keys, from the table in internal/jobopt, which
// fill runtime.JobOptions:
//
//	name=emails.send          stable wire name the worker routes by; default
//	                          <package>.<Type>. Set it before renaming a type with
//	                          jobs in flight.
//	queue=emails              queue to push to; default the queue named default.
//	                          No # (kept for partitions in docs/cluster.md), {, }
//	                          or comma (which separates the queues of a worker's
//	                          --queue list)
//	connection=secondary      dispatcher to use: the one registered with
//	                          runtime.SetConnection("secondary", engine)
//	tries=5                   attempts allowed; default the worker's --tries (1)
//	backoff=10s,1m,5m         delays before each retry; the last repeats
//	timeout=30s               limit of one attempt; default the worker's --timeout
//	                          (60s)
//	retry_until=24h           retry for this long after dispatch, however many
//	                          tries that takes, then fail (Laravel's retryUntil)
//	max_exceptions=3          fail after this many attempts that returned an error
//	                          or panicked
//	fail_on_timeout           fail at the first timeout instead of retrying (or
//	                          =true, =false)
//	delay=90s                 every dispatch becomes ready only after this
//	unique_for=1h             while one is queued or running, another dispatch
//	                          pushes nothing and returns a
//	                          *runtime.DuplicateError; the lock goes when the job
//	                          ends, or this long after dispatch if its worker died
//	debounce=30s              of a burst of dispatches with one debounce key, only
//	                          the last runs, with its payload, 30s after it
//	                          (debounced jobs in docs/flow-control.md)
//	debounce_key=UserID       the field whose value is the debounce key (a string,
//	                          a number, a bool or a fmt.Stringer); debounce needs
//	                          it
//	debounce_max_wait=5m      the longest a burst waits from its first dispatch;
//	                          default 10 windows
//	group=TenantID            the field (a string or an integer) holding the job's
//	                          fair group: the queue takes its groups' jobs in turn
//	                          (generates JobGroup)
//	group_limit=2             at most this many jobs of one group run at once,
//	                          across all workers (fair groups in
//	                          docs/flow-control.md)
//	encrypted                 the body is sealed with AES-GCM under
//	                          runtime.EngineConfig.Keys (a runtime.KeyRing; see
//	                          encryption in docs/jobs.md); or =true, =false
//	tags=mail,billing         labels carried with the job (Envelope.Tags) for
//	                          monitoring
//	result=Quote              the handler returns a Quote as well as an error,
//	                          stored with the ack for the dispatcher to Await or
//	                          read (results in docs/results.md)
//	needs=Charge,[]SendEmail  the job runs as a step of a workflow
//	                          (runtime.NewWorkflow), handed the results of these
//	                          jobs of the package, each of which declares result=,
//	                          in order; [] before a name takes the results of a
//	                          list of such steps (a fan-in). Generates the struct
//	                          <Type>Inputs its handler takes, and the methods
//	                          AddTo and SpawnAfter, whose parameters are the
//	                          needed steps, typed
//	laravel=App\Jobs\Mail     the Laravel app's PHP job class the struct stands
//	                          for (or Class@method, a string job); adds
//	                          RegisterLaravel for the Laravel bridge in
//	                          docs/laravel.md
//	version=2                 the version of the job's wire schema, one more than
//	                          jobgen.lock's; needs upgrade (changing jobs in
//	                          docs/changing-jobs.md)
//	upgrade=SendEmailV1       the struct holding the previous version's fields,
//	                          whose Upgrade() method returns the job: workers
//	                          upgrade queued jobs of that version with it
//	decode=lenient            skip keys the struct does not know and leave missing
//	                          fields zero; the default, strict, fails such a job
//	                          naming the field (decoding in docs/changing-jobs.md)
//
// # The schema lock
//
// Beside jobs_gen.go jobgen writes jobgen.lock, the wire schema of every
// job, event and result type: wire name, schema version, and each
// field's wire key and type. Commit it. A change that would break jobs
// already queued (a wire key renamed, a field removed, a type changed
// other than widened, a wire name changed) is refused at its file:line
// with the ways forward: keep the old key with a tag, declare the next
// version with an upgrade, or accept the break with
// jobgen -accept-break=Type, which the lock records. A new field or a
// widened integer updates the lock. See docs/changing-jobs.md.
//
// Durations are Go durations (time.ParseDuration). A job's exported
// fields are its payload, encoded with msgpack; jobgen rejects fields
// that cannot cross a queue, looked for through nested structs,
// pointers, arrays, slices and maps: those msgpack cannot encode
// (channels, funcs, complex numbers, uintptr, unsafe.Pointer), structs
// with fields but none exported, which would arrive empty (*sql.DB,
// sync.Mutex, *time.Location), and interfaces other than any and error,
// which the worker could not decode, unless the package registers a
// type that implements one with msgpack.RegisterExt or the interface's
// own package registers types; carry an ID instead and look the thing
// up in the handler. It rejects a job struct whose
// fields are all unexported too. A
// struct with no fields at all is a job with no data, and is fine.
//
// # Events and listeners
//
// `//job:event` marks an event: a struct whose fields its listeners get
// (Laravel's events). `//job:listen=Event` marks a listener of an event
// of the same package: a struct with no fields, taking the job keys
// above (but not laravel=, unique_for= or the debounce keys) for its queued jobs, or `sync`
// to run inside Fire instead:
//
//	//job:event
//	type OrderShipped struct{ OrderID string }
//
//	//job:listen=OrderShipped queue=mail tries=3 backoff=10s
//	type EmailShipmentNotice struct{}
//
//	//job:listen=OrderShipped sync
//	type RecordShipment struct{}
//
// The event gets Fire(ctx), which runs the synchronous listeners and
// pushes one job per queued listener (runtime.ListenerJob, with the
// listener's name, options, retries and failed-store entry) in one atomic
// call (runtime.Fire). For that the queued listeners of one event must
// share queue, connection and delay; jobgen reports those that do not,
// and a listener of an event the package does not declare, at its
// position. Each listener gets a method HandleL(ctx, e Event) error in
// Handlers.
//
// # Running it
//
// Add jobgen as a tool of your module and a go:generate line to the
// package:
//
//	go get -tool github.com/jobgen/jobgen/cmd/jobgen
//
//	//go:generate go tool jobgen
//
// (or, without the tool line in go.mod, //go:generate go run
// github.com/jobgen/jobgen/cmd/jobgen). Then go generate ./... writes
// jobs_gen.go in every package with jobs. With no arguments jobgen works
// on the package in the current directory, which is where go generate
// runs it; it also takes package patterns, such as ./... :
//
//	jobgen [-check] [packages]
//
// -check writes nothing and exits 1 if a generated file is out of date,
// for CI. Problems are reported as file:line:column: message, all at
// once, and jobgen exits 1 without writing anything. jobgen overwrites
// only a jobs_gen.go that starts with its header, and removes its
// jobs_gen.go from a package that has no jobs left.
//
// While loading, jobgen leaves its earlier jobs_gen.go out of the
// package, so a stale file that no longer compiles is no obstacle, and
// tolerates type errors, since code that calls the generated methods has
// them until the file is generated.
//
// # What it generates
//
// One file per package, jobs_gen.go, gofmt'd and the same for the same
// input, jobs sorted by type name. It is thin glue: each function is one
// call into github.com/jobgen/jobgen/runtime. For each job type T:
//
//   - the methods of runtime.Job: JobName, JobOptions (a literal of the
//     annotation's values) and EncodeJob;
//   - typed dispatch: T{...}.Dispatch(ctx) sends the job and returns its
//     ID; Delay(d), At(t), OnQueue(q), OnConnection(c) and WithChain(jobs...)
//     return a *runtime.PendingDispatch, on which the same setters chain
//     and whose Dispatch(ctx) sends it; DispatchIf(ctx, cond),
//     DispatchUnless(ctx, cond) and DispatchSync(ctx).
//
// And for the package:
//
//   - Handlers, an interface with a method HandleT(ctx, job T) error for
//     every job T without a Handle method of its own, so that a missing
//     handler is a compile error. It is emitted even when it is empty
//     (every job handles itself), so Register always has the same
//     signature; pass nil then.
//   - Register(r *runtime.Router, h Handlers), which routes every job:
//     to its own Handle(ctx context.Context) error method if it has one
//     (declared on the value, not the pointer), otherwise to h. A job with
//     a Failed(ctx context.Context, err error) method gets it as its
//     failed hook (runtime.OnFailed).
//
// Each event E gets Fire(ctx) error; each listener L gets ListenerName
// and ListenerOptions (runtime.Listener), a Handlers method
// HandleL(ctx, e E) error and a runtime.RegisterListener call in
// Register.
//
// A job type must not have a field or method named like a generated
// method, and the package must not declare Handlers or Register, nor
// package-level names context, time or runtime; jobgen reports each.
//
// # Where jobs go
//
// Dispatch decides nothing itself: runtime.DispatcherFor picks the
// dispatcher, which is the one put on the context with
// runtime.WithDispatcher, else for a job with a connection the one named
// with runtime.SetConnection, else the default set at start-up with
// runtime.SetDefaultDispatcher (usually the *runtime.Engine from
// runtime.Open). DispatchSync runs the handler in place through the
// router of runtime.WithRouter or runtime.SetDefaultRouter.
//
//	engine, err := runtime.Open(ctx, os.Getenv(runtime.URLEnv), runtime.EngineConfig{})
//	runtime.SetDefaultDispatcher(engine)
//	id, err := emails.SendEmail{To: "a@example.com"}.Dispatch(ctx)
//
//	r := runtime.NewRouter()
//	emails.Register(r, myHandlers{})
//	w, err := runtime.NewWorker(engine, r, runtime.WorkerConfig{Queues: []string{"emails"}})
//	err = w.Run(ctx)
//
// # Starter files
//
//	jobgen make:job Name [--queue q] [--dir d]
//
// writes an annotated job with a Handle method to d/name.go (Name in
// snake_case), from the templates embedded from the repository's
// templates/ directory. It adds a //go:generate line if no file of the
// package has one for jobgen yet. It never overwrites a file, and Name
// must be an exported Go identifier that the package does not declare.
//
// # Queue commands
//
// jobgen also runs Laravel's queue commands on the queues in Redis:
//
//	jobgen queue:failed [--queue q] [--limit n]
//	jobgen queue:retry ID... | all | --queue q
//	jobgen queue:forget ID...
//	jobgen queue:flush [--queue q]
//	jobgen queue:prune-failed [--hours 24]
//	jobgen queue:clear [queue...]
//	jobgen queue:restart
//	jobgen queue:pause queue...
//	jobgen queue:resume queue...
//	jobgen queue:size [queue...]
//	jobgen queue:monitor [queue...] [--max n] [--max-failed n]
//	jobgen dashboard [--addr 127.0.0.1:8080] [--read-only]
//
// Each takes --help, --redis URL (else $JOBGEN_REDIS_URL, else
// $REDIS_URL), --prefix (the application's
// runtime.EngineConfig.Prefix) and --partitions NAME=N (its
// EngineConfig.Partitions). jobgen help lists them. queue:work runs
// the application's handlers, so it runs from the application's own
// binary, whose main registers them and calls console.Main(router); that
// binary runs the other commands too. Both are package
// github.com/jobgen/jobgen/console, which documents the commands.
//
// # Layout
//
// main calls internal/cli, which hands queue:* commands to package
// console. The generator is load → model → emit:
// internal/load reads packages with golang.org/x/tools/go/packages into
// the plain values of internal/model; internal/emit writes Go from the
// model alone with github.com/dave/jennifer; internal/generate ties them
// together and writes or checks files. internal/scaffold is make:job.
// internal/examplejobs is an application's jobs, whose test runs them on
// Redis end to end; testdata/ holds the golden cases.
package main
