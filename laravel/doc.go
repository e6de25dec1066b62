// Package laravel bridges jobgen and a Laravel application's Redis
// queues, so a service moves from PHP to Go one job at a time: Go
// workers run jobs that Laravel dispatches, and Go dispatches jobs that
// Laravel's workers run, on the same queues.
//
// # Connecting
//
// Open takes the app's connection as a URL; NewQueue takes a go-redis
// client and a Config:
//
//	q, closeQ, err := laravel.Open(ctx, "laravel+redis://127.0.0.1:6379/0?prefix=laravel_database_&retry_after=90")
//
// Queue speaks Illuminate\Queue\RedisQueue's layout: the list
// queues:NAME, the sorted sets queues:NAME:delayed and
// queues:NAME:reserved scored in unix seconds, and the list
// queues:NAME:notify, every key under the Redis connection's prefix,
// with one Lua script per operation (the lua directory).
//
// # Jobs
//
// A Go struct stands for a PHP job class. jobgen maps it from its
// annotation, //job:laravel=App\Jobs\SendWelcomeEmail, into a generated
// RegisterLaravel(m *laravel.Mapper); Map does the same by hand. The
// struct's fields map to the class's properties by the php struct tag,
// or by name, its leading capitals lowered (UserID is $userID):
//
//	type SendWelcomeEmail struct {
//		UserID int      `php:"userId"`          // public $userId
//		Email  string   `php:"email,protected"` // protected $email
//		Tags   []string `php:"tags,private"`    // private $tags
//	}
//
// Visibility matters when Go dispatches: Laravel's SerializesModels
// restores a property only under the name its visibility mangles. A
// string job (Queue::push('App\Jobs\X@handle', $data)) maps with
// MapString and carries JSON, no PHP serialization.
//
// data.command is PHP's serialize() of the job object, which package
// phpserial reads and writes. What cannot cross is refused with an
// error matching ErrUnmappable: closures, Eloquent models (stored as
// ModelIdentifier, which only the app's database restores), and values
// that do not fit their Go fields. A chain Laravel dispatched continues
// on a Go worker when it knows every link's class. What only Laravel's
// worker can finish, a chain with catch callbacks or a link of a class
// no Go type is mapped to, or a job of a batch, a Go worker leaves on
// its queue for PHP's workers, as it leaves unmapped classes
// (WorkerConfig.FailUnmapped fails them instead); a payload that is no
// job at all it fails.
//
// # Running Laravel's jobs in Go
//
//	r := runtime.NewRouter()
//	Register(r, handlers{})       // generated, as for any job
//	m := laravel.NewMapper()
//	RegisterLaravel(m)            // generated for laravel= jobs
//	w, err := laravel.NewWorker(q, m, r, laravel.WorkerConfig{Queues: []string{"emails"}, Failed: runtime.NewInspector(engine).Failed()})
//	err = w.Run(ctx)
//
// Worker follows Laravel's Worker: tries, backoff, retryUntil,
// maxExceptions, timeout and failOnTimeout from the payload, release,
// delete and fail from the handler (runtime.ReleaseRequest, DeleteRequest,
// FailRequest), and Laravel's queue:restart signal when Config.CachePrefix
// names the cache's keys. Subscribe receives its events, with Laravel's
// names (runtime.JobProcessing, JobProcessed, JobFailed, ...).
//
// # Failed jobs
//
// A job that fails for good is recorded with the payload Laravel pushed,
// in one of two places. Given WorkerConfig.FailedJobs, the worker writes
// it into the app's own failed_jobs table, as Laravel's
// DatabaseUuidFailedJobProvider does (uuid, connection, queue, payload,
// exception, failed_at in the app's timezone), so php artisan
// queue:failed lists it, queue:retry puts it back for either kind of
// worker, and queue:prune-failed prunes it; FailedJobs.Connection must
// be the app's name for the queue connection, or queue:retry cannot push
// it back. Otherwise it goes to jobgen's failed store
// (WorkerConfig.Failed), and Retry, or queue:retry and a jobgen worker
// with RegisterRequeue, puts it back on its Laravel queue.
//
// # Checking a setup
//
// Doctor (jobgen laravel:doctor, run from the app's directory) reads the
// app's .env as Laravel does and finds where its queues really are:
// the Redis server (REDIS_URL or REDIS_HOST), database and prefix, the
// queue connection's name, the cache store, and the failed_jobs
// connection; each problem comes with its fix.
//
// # Laravel versions
//
// The bridge speaks Laravel 8 to 13. Config.Laravel (laravel=N in the
// URL) names the app's major version where the layout differs: the key
// of unique locks (11, 12), queue:pause (12), debounced jobs and lock
// owners (13). docs/laravel.md lists every difference, with its source.
//
// # Dispatching to Laravel's workers
//
//	d, err := laravel.NewDispatcher(q, m)
//	runtime.SetConnection("laravel", d) // for jobs annotated connection=laravel
//	_, err = SendWelcomeEmail{UserID: 7}.Delay(time.Minute).Dispatch(ctx)
//
// # Weaker than jobgen's engine
//
// The layout is Laravel's, so a reservation is the reserved payload
// itself: there is no fencing token, and a worker cut off from Redis
// longer than retry_after may finish a job that another worker has
// taken again (its delete or release then finds nothing, and says so).
// There is no per-job state beside the payload, so no batches across the
// bridge, and Dispatcher refuses chains of its own; a chain Laravel
// dispatched continues on Go workers (above). Unique jobs take and free
// their locks in the app's Redis cache store, as Laravel does (unique.go).
// Encrypted (ShouldBeEncrypted) jobs cross both ways with the app's key
// (NewEncrypter, Mapper.UseEncrypter, MapEncrypted). Times are whole seconds. docs/laravel.md has the
// conformance table and every difference.
package laravel
