package jobopt

import (
	"regexp"
	"strings"
)

// Key is one key of a //job: annotation, as the docs describe it. The
// keys of the options (All) are among them, and so are the annotation's
// own: the job's name, its PHP class, its result type, the fields that
// hold its debounce key and its group, and the keys of events and
// listeners.
type Key struct {
	// Key is the key as written: retry_until.
	Key string
	// Option is the Name of the option of All the key sets, "" for a key
	// of the annotation's own.
	Option string
	// Job is set for the keys of a job type, which the docs' table of
	// keys and the make:job starter list; the keys of events and
	// listeners only (event, listen, sync) are documented with them.
	Job bool
	// Example is the key as written in a //job: line: retry_until=24h,
	// or a bare key such as fail_on_timeout.
	Example string
	// Usage says what the key does, in Markdown (`code` and
	// [links](file.md)); PlainText gives it for Go doc comments.
	Usage string
}

// Keys is every //job: key, in the order the docs list them:
// docs/jobs.md's table of annotations and the list in cmd/jobgen's doc
// are generated from it, make:job's starter lists the job keys, and the
// generator's tests check that it reads exactly these keys.
var Keys = []Key{
	{Key: "name", Job: true, Example: "name=emails.send",
		Usage: "stable wire name the worker routes by; default `<package>.<Type>`. Set it before renaming a type with jobs in flight."},
	{Key: "queue", Option: "Queue", Job: true, Example: "queue=emails",
		Usage: "queue to push to; default the queue named `default`. No `#` (kept for [partitions](cluster.md)), `{`, `}` or comma (which separates the queues of a worker's `--queue` list)"},
	{Key: "connection", Option: "Connection", Job: true, Example: "connection=secondary",
		Usage: "dispatcher to use: the one registered with `runtime.SetConnection(\"secondary\", engine)`"},
	{Key: "tries", Option: "Tries", Job: true, Example: "tries=5",
		Usage: "attempts allowed; default the worker's `--tries` (1)"},
	{Key: "backoff", Option: "Backoff", Job: true, Example: "backoff=10s,1m,5m",
		Usage: "delays before each retry; the last repeats"},
	{Key: "timeout", Option: "Timeout", Job: true, Example: "timeout=30s",
		Usage: "limit of one attempt; default the worker's `--timeout` (60s)"},
	{Key: "retry_until", Option: "RetryUntil", Job: true, Example: "retry_until=24h",
		Usage: "retry for this long after dispatch, however many tries that takes, then fail (Laravel's `retryUntil`)"},
	{Key: "max_exceptions", Option: "MaxExceptions", Job: true, Example: "max_exceptions=3",
		Usage: "fail after this many attempts that returned an error or panicked"},
	{Key: "fail_on_timeout", Option: "FailOnTimeout", Job: true, Example: "fail_on_timeout",
		Usage: "fail at the first timeout instead of retrying (or `=true`, `=false`)"},
	{Key: "delay", Option: "Delay", Job: true, Example: "delay=90s",
		Usage: "every dispatch becomes ready only after this"},
	{Key: "unique_for", Option: "UniqueFor", Job: true, Example: "unique_for=1h",
		Usage: "while one is queued or running, another dispatch pushes nothing and returns a `*runtime.DuplicateError`; the lock goes when the job ends, or this long after dispatch if its worker died"},
	{Key: "debounce", Option: "Debounce", Job: true, Example: "debounce=30s",
		Usage: "of a burst of dispatches with one debounce key, only the last runs, with its payload, 30s after it ([debounced jobs](flow-control.md#debounced-jobs))"},
	{Key: "debounce_key", Job: true, Example: "debounce_key=UserID",
		Usage: "the field whose value is the debounce key (a string, a number, a bool or a `fmt.Stringer`); `debounce` needs it"},
	{Key: "debounce_max_wait", Option: "DebounceMaxWait", Job: true, Example: "debounce_max_wait=5m",
		Usage: "the longest a burst waits from its first dispatch; default 10 windows"},
	{Key: "group", Job: true, Example: "group=TenantID",
		Usage: "the field (a string or an integer) holding the job's fair group: the queue takes its groups' jobs in turn (generates `JobGroup`)"},
	{Key: "group_limit", Option: "GroupLimit", Job: true, Example: "group_limit=2",
		Usage: "at most this many jobs of one group run at once, across all workers ([fair groups](flow-control.md#fair-groups))"},
	{Key: "encrypted", Option: "Encrypted", Job: true, Example: "encrypted",
		Usage: "the body is sealed with AES-GCM under `runtime.EngineConfig.Keys` (a `runtime.KeyRing`; see [encryption](#encryption)); or `=true`, `=false`"},
	{Key: "tags", Option: "Tags", Job: true, Example: "tags=mail,billing",
		Usage: "labels carried with the job (`Envelope.Tags`) for monitoring"},
	{Key: "result", Job: true, Example: "result=Quote",
		Usage: "the handler returns a `Quote` as well as an error, stored with the ack for the dispatcher to `Await` or read ([results](results.md))"},
	{Key: "needs", Option: "Needs", Job: true, Example: "needs=Charge,[]SendEmail",
		Usage: "the job runs as a step of a workflow (`runtime.NewWorkflow`), handed the results of these jobs of the package, each of which declares `result=`, in order; `[]` before a name takes the results of a list of such steps (a fan-in). Generates the struct `<Type>Inputs` its handler takes, and the methods `AddTo` and `SpawnAfter`, whose parameters are the needed steps, typed"},
	{Key: "laravel", Job: true, Example: `laravel=App\Jobs\Mail`,
		Usage: "the Laravel app's PHP job class the struct stands for (or `Class@method`, a string job); adds `RegisterLaravel` for the [Laravel bridge](laravel.md)"},
	{Key: "version", Job: true, Example: "version=2",
		Usage: "the version of the job's wire schema, one more than `jobgen.lock`'s; needs `upgrade` ([changing jobs](changing-jobs.md))"},
	{Key: "upgrade", Job: true, Example: "upgrade=SendEmailV1",
		Usage: "the struct holding the previous version's fields, whose `Upgrade()` method returns the job: workers upgrade queued jobs of that version with it"},
	{Key: "decode", Job: true, Example: "decode=lenient",
		Usage: "skip keys the struct does not know and leave missing fields zero; the default, `strict`, fails such a job naming the field ([decoding](changing-jobs.md#decoding-that-names-what-is-wrong))"},
	{Key: "event", Example: "event",
		Usage: "marks an event, whose listeners get its fields"},
	{Key: "listen", Example: "listen=OrderShipped",
		Usage: "marks a listener of an event of the same package"},
	{Key: "sync", Example: "sync",
		Usage: "runs a listener inside `Fire` instead of queueing it"},
}

// JobKeys returns the keys of a job type (Key.Job), in the order of
// Keys.
func JobKeys() []string {
	var out []string
	for _, k := range Keys {
		if k.Job {
			out = append(out, k.Key)
		}
	}
	return out
}

// markdownLink is a Markdown link to a page of docs/, or to a section of
// docs/jobs.md, which lists the keys: [text](page.md#section).
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\(([^)#]*)[^)]*\)`)

// PlainText returns k.Usage without Markdown: a link becomes its text
// and the page it points to, "fair groups in docs/flow-control.md", and
// code loses its backquotes.
func (k Key) PlainText() string {
	s := markdownLink.ReplaceAllStringFunc(k.Usage, func(link string) string {
		m := markdownLink.FindStringSubmatch(link)
		page := m[2]
		if page == "" {
			page = "jobs.md"
		}
		return m[1] + " in docs/" + page
	})
	return strings.ReplaceAll(s, "`", "")
}
