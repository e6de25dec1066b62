// Package jobopt is the one table of the options a job type carries:
// for each, its field in runtime.JobOptions, its Go kind, its //job: key,
// where it travels in the envelope and in a Laravel payload, and its doc.
//
// The generator reads the table to parse annotations and to write
// JobOptions literals (cmd/jobgen); tests check runtime.JobOptions, the
// generator's model, the envelope's codec, the dispatch path and the
// Laravel mapper against it, so that an option added to one and not the
// others fails a test.
//
// Paths lists the ways a job is dispatched and what each option does on
// each (paths.go): runtime's composition test runs every cell against a
// real worker, and docs/jobs.md shows the table.
package jobopt

import "time"

// Kind is the Go type of an option's value.
type Kind int

// The kinds, each with the //job: form it is written in.
const (
	// String is a word: queue=emails.
	String Kind = iota + 1
	// PositiveInt is a whole number of at least 1: tries=5.
	PositiveInt
	// Bool is true or false, or the bare key for true: encrypted.
	Bool
	// PositiveDuration is a Go duration above zero: timeout=30s.
	PositiveDuration
	// Durations is a comma-separated list of Go durations: backoff=10s,1m.
	Durations
	// Strings is a comma-separated list of words: tags=mail,billing.
	Strings
)

// GoType is the Go type of values of kind k, as written in source.
func (k Kind) GoType() string {
	switch k {
	case String:
		return "string"
	case PositiveInt:
		return "int"
	case Bool:
		return "bool"
	case PositiveDuration:
		return "time.Duration"
	case Durations:
		return "[]time.Duration"
	case Strings:
		return "[]string"
	}
	return "?"
}

// Option is one option of a job type.
type Option struct {
	// Name is its field in runtime.JobOptions (and the generator's
	// model.Options).
	Name string
	// Kind is its Go type.
	Kind Kind
	// Key is its //job: key.
	Key string
	// Envelope is the field of runtime.Envelope that carries it to the
	// worker, "" for an option used only at dispatch (a delay, a unique
	// lock's time).
	Envelope string
	// Wire is the key the envelope's codec writes Envelope under.
	Wire string
	// Laravel is the key of a Laravel payload that carries it, "" for
	// none.
	Laravel string
	// Doc is the doc comment of its runtime.JobOptions field, without
	// the name that starts it.
	Doc string
}

// All is every option, in the order runtime.JobOptions declares them.
var All = []Option{
	{Name: "Queue", Kind: String, Key: "queue", Envelope: "Queue", Wire: "q",
		Doc: `to push to; "" means "default".`},
	{Name: "Connection", Kind: String, Key: "connection", Envelope: "Connection", Wire: "c",
		Doc: `names the dispatcher to use; "" means the default one.`},
	{Name: "Tries", Kind: PositiveInt, Key: "tries", Envelope: "Tries", Wire: "t", Laravel: "maxTries",
		Doc: `is the number of attempts allowed.`},
	{Name: "Backoff", Kind: Durations, Key: "backoff", Envelope: "Backoff", Wire: "bo", Laravel: "backoff",
		Doc: `lists the delays between attempts; the last one repeats.`},
	{Name: "Timeout", Kind: PositiveDuration, Key: "timeout", Envelope: "Timeout", Wire: "to", Laravel: "timeout",
		Doc: `limits one attempt.`},
	{Name: "RetryUntil", Kind: PositiveDuration, Key: "retry_until", Envelope: "RetryUntil", Wire: "ru", Laravel: "retryUntil",
		Doc: `stops retries this long after dispatch.`},
	{Name: "MaxExceptions", Kind: PositiveInt, Key: "max_exceptions", Envelope: "MaxExceptions", Wire: "me", Laravel: "maxExceptions",
		Doc: `fails the job after this many exceptions.`},
	{Name: "FailOnTimeout", Kind: Bool, Key: "fail_on_timeout", Envelope: "FailOnTimeout", Wire: "ft", Laravel: "failOnTimeout",
		Doc: `fails the job at its first timeout.`},
	{Name: "Delay", Kind: PositiveDuration, Key: "delay",
		Doc: `postpones every dispatch of the job.`},
	{Name: "UniqueFor", Kind: PositiveDuration, Key: "unique_for",
		Doc: `keeps a second copy from being queued for this long while one is pending.`},
	{Name: "Debounce", Kind: PositiveDuration, Key: "debounce",
		Doc: `runs only the last of a burst of dispatches with the same debounce key, once this long has passed since it (debounce.go).`},
	{Name: "DebounceMaxWait", Kind: PositiveDuration, Key: "debounce_max_wait",
		Doc: `caps how long a debounced job waits from the first dispatch of its burst; 0 means 10 times Debounce.`},
	{Name: "Encrypted", Kind: Bool, Key: "encrypted", Envelope: "Encrypted", Wire: "en",
		Doc: `encrypts the job's body at rest.`},
	{Name: "Tags", Kind: Strings, Key: "tags", Envelope: "Tags", Wire: "tg",
		Doc: `label the job for monitoring.`},
	// The group itself is no option: `group=Field` names the field that
	// holds it (runtime.GroupedJob). The limit travels in an envelope
	// header beside the group (runtime.GroupLimitHeader).
	{Name: "GroupLimit", Kind: PositiveInt, Key: "group_limit",
		Doc: `is the most jobs of one group (see GroupedJob) that run at once, across all workers; 0 means no limit.`},
	// Needs never travels in the envelope: the workflow's graph, kept
	// apart from the queues, hands a step its inputs. The annotation
	// names job types of the package (needs=Charge,[]SendEmail); the
	// generator writes their wire names.
	{Name: "Needs", Kind: Strings, Key: "needs",
		Doc: `are the wire names of the jobs whose results the job is handed as a step of a workflow, in order; a name starting with "[]" is a list of such steps (a fan-in). A job that needs results runs only as a step of a workflow (workflow.go).`},
}

// Overrides are the options one dispatch sets that no annotation does:
// no //job: key, no runtime.JobOptions field, but a row of the
// composition table (paths.go) like the options of All. Label is how
// the table names them.
var Overrides = []Override{
	{Name: "At", Label: "`At(t)`",
		Doc: "makes the job ready at an absolute time: PendingDispatch.At, PendingMany.At, Outgoing.At; the outbox reads it against the database's clock."},
}

// Override is an option of one dispatch (Overrides).
type Override struct {
	// Name names it in the composition table's rows and outcomes.
	Name string
	// Label is how the docs' table names it.
	Label string
	// Doc says what it does.
	Doc string
}

// ByKey returns the option whose //job: key is key.
func ByKey(key string) (Option, bool) {
	for _, o := range All {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// Sample is a value of o's kind that is not zero, for tests that set
// each option in turn.
func (o Option) Sample() any {
	switch o.Kind {
	case String:
		return "x"
	case PositiveInt:
		return 3
	case Bool:
		return true
	case PositiveDuration:
		return 7 * time.Second
	case Durations:
		return []time.Duration{time.Second, 2 * time.Second}
	case Strings:
		return []string{"a", "b"}
	}
	return nil
}
