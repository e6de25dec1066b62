package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/runtime"
)

// mailV1 and mailV2 are two versions of one job, as generated code
// would write them: version 2 renamed To to Recipient, and upgrades
// version 1 bodies with mailV1.Upgrade.
type mailV1 struct {
	To      string
	Subject string
}

func (mailV1) JobName() string                { return "test.Mail" }
func (mailV1) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "mail"} }
func (j mailV1) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }
func (old mailV1) Upgrade() mailV2            { return mailV2{Recipient: old.To, Subject: old.Subject} }
func (mailV2) JobName() string                { return "test.Mail" }
func (mailV2) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "mail"} }
func (j mailV2) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }
func (mailV2) JobVersion() int                { return 2 }
func (j mailV3) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }
func (mailV3) JobName() string                { return "test.Mail" }
func (mailV3) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "mail"} }
func (mailV3) JobVersion() int                { return 3 }
func (j laxJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }
func (laxJob) JobName() string                { return "test.Lax" }
func (laxJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func bodyOf(t *testing.T, m map[string]any) []byte {
	b, err := msgpack.Marshal(m)
	require.NoError(t, err)
	return b
}

type mailV2 struct {
	Recipient string
	Subject   string
}

type mailV3 struct{ Address string }

type laxJob struct{ URL string }

// runBody runs body through r as a job named name of schema version v.
func runBody(r *runtime.Router, name string, v int, body []byte) error {
	return r.Run(context.Background(), &runtime.Envelope{ID: runtime.NewID(), Name: name, Body: body, SchemaVersion: v})
}

// A body that does not fit its struct fails with a FieldError naming the
// job and the field, the wire type found and the type wanted; one with a
// key the struct does not know, or without a field, too, unless the
// field is optional or the job decodes leniently.
func TestDecodeNamesTheField(t *testing.T) {
	var seen []mailV1
	r := runtime.NewRouter()
	runtime.Register(r, "test.Mail", func(ctx context.Context, j mailV1) error { seen = append(seen, j); return nil })
	runtime.Register(r, "test.Digest", func(ctx context.Context, j mailV1) error { seen = append(seen, j); return nil }, runtime.OptionalKeys[mailV1]("Subject"))
	runtime.Register(r, "test.Lax", func(ctx context.Context, j laxJob) error { return nil }, runtime.Lenient[laxJob]())
	require.NoError(t, r.Err())

	for _, tc := range []struct {
		name    string
		job     string
		body    map[string]any
		want    runtime.FieldError
		message string
	}{
		{"wrong type", "test.Mail", map[string]any{"To": 5, "Subject": "s"},
			runtime.FieldError{Job: "test.Mail", Field: "To", Key: "To", Found: "int", Want: "string", Problem: runtime.ProblemType},
			`jobgen: job test.Mail: field To (wire key "To"): the body holds a msgpack int, want string`},
		{"unknown key", "test.Mail", map[string]any{"Recipient": "a", "Subject": "s"},
			runtime.FieldError{Job: "test.Mail", Key: "Recipient", Found: "string", Problem: runtime.ProblemUnknown, Known: []string{"To", "Subject"}},
			`jobgen: job test.Mail: its body has key "Recipient" (a string), which its struct has no field for (its keys: To, Subject)`},
		{"missing field", "test.Mail", map[string]any{"To": "a"},
			runtime.FieldError{Job: "test.Mail", Field: "Subject", Key: "Subject", Want: "string", Problem: runtime.ProblemMissing},
			`jobgen: job test.Mail: field Subject (wire key "Subject", string) is missing from its body`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runBody(r, tc.job, 0, bodyOf(t, tc.body))
			require.ErrorIs(t, err, runtime.ErrDecode)
			var fe *runtime.FieldError
			require.ErrorAs(t, err, &fe)
			fe.Err = nil
			require.Equal(t, tc.want, *fe)
			require.ErrorContains(t, err, tc.message)
		})
	}
	seen = nil
	require.NoError(t, runBody(r, "test.Digest", 0, bodyOf(t, map[string]any{"To": "a"})), "an optional key may be missing")
	require.NoError(t, runBody(r, "test.Lax", 0, bodyOf(t, map[string]any{"URL": "u", "Extra": 1})), "a lenient job skips unknown keys")
	require.NoError(t, runBody(r, "test.Lax", 0, bodyOf(t, map[string]any{})), "a lenient job leaves missing fields zero")
	body, err := mailV1{To: "a", Subject: "s"}.EncodeJob()
	require.NoError(t, err)
	require.NoError(t, runBody(r, "test.Mail", 0, body))
	require.Equal(t, []mailV1{{To: "a"}, {To: "a", Subject: "s"}}, seen)
}

// A job whose body does not fit goes to the failed store at once, with
// the FieldError's message.
func TestDecodeFieldErrorFailsTheJob(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Mail", func(ctx context.Context, j mailV1) error { return nil })
		e := &runtime.Envelope{ID: runtime.NewID(), Name: "test.Mail", Queue: "mail", Tries: 5, Body: bodyOf(t, map[string]any{"To": []string{"x"}, "Subject": "s"})}
		require.NoError(t, b.engine.Push(b.ctx, e))
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"mail"}, StopWhenEmpty: true})
		fs := b.failed(t, "mail")
		require.Len(t, fs, 1)
		require.Equal(t, 1, fs[0].Attempts, "no retry: decoding will not get better")
		require.Contains(t, fs[0].Error, `job test.Mail: field To (wire key "To"): the body holds a msgpack array, want string`)
	})
}

// A worker of version 2 upgrades a version 1 body before its handler
// runs; a version 3 body it does not know. DispatchSync runs the
// upgrade too.
func TestVersionUpgradeBeforeHandler(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	r := runtime.NewRouter()
	runtime.Register(r, "test.Mail", func(ctx context.Context, j mailV2) error {
		mu.Lock()
		seen = append(seen, j.Recipient)
		mu.Unlock()
		return nil
	}, runtime.UpgradeFrom(1, mailV1.Upgrade))
	require.NoError(t, r.RunSync(context.Background(), mailV1{To: "one", Subject: "s"}))
	require.NoError(t, r.RunSync(context.Background(), mailV2{Recipient: "two", Subject: "s"}))
	require.Equal(t, []string{"one", "two"}, seen)
	err := r.RunSync(context.Background(), mailV3{Address: "three"})
	require.ErrorIs(t, err, runtime.ErrNewerVersion)

	// A version 1 body carrying a key version 1 did not have is named.
	err = runBody(r, "test.Mail", 1, bodyOf(t, map[string]any{"To": "x", "Subject": "s", "CC": "y"}))
	require.ErrorContains(t, err, `job test.Mail (version 1): its body has key "CC"`)

	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		var got []string
		var gmu sync.Mutex
		runtime.Register(b.router, "test.Mail", func(ctx context.Context, j mailV2) error {
			gmu.Lock()
			got = append(got, j.Recipient)
			gmu.Unlock()
			return nil
		}, runtime.UpgradeFrom(1, mailV1.Upgrade))
		b.dispatch(t, mailV1{To: "a", Subject: "s"}, mailV2{Recipient: "b", Subject: "s"})
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"mail"}, StopWhenEmpty: true})
		require.ElementsMatch(t, []string{"a", "b"}, got)
		require.Empty(t, b.failed(t, "mail"))
	})
}

// A worker that knows version 1 only gives a version 2 job back, its
// attempt unused, logs it once and counts it, and its record shows the
// job waiting for a newer worker; a version 2 worker then runs it on its
// first attempt.
func TestVersionNewerGivenBackUnused(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Mail", func(ctx context.Context, j mailV1) error {
			return errors.New("a version 1 handler ran a version 2 job")
		})
		ids := b.dispatch(t, mailV2{Recipient: "new", Subject: "s"})
		old, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"mail"}, MonitorEvery: 20 * time.Millisecond})
		eventually(t, func() bool { return old.Stats().GivenBackNewer >= 1 }, "the version 1 worker gives the job back")
		ins := runtime.NewInspector(b.engine)
		eventually(t, func() bool {
			w, err := ins.WaitingForNewer(b.ctx, time.Minute)
			return err == nil && len(w) == 1 && w[0].Name == "test.Mail" && w[0].Version == 2 && w[0].Known == 1 && w[0].Queue == "mail"
		}, "the worker's record shows the job waiting for a newer worker")
		stop()
		require.Empty(t, b.failed(t, "mail"))
		released := b.log.of(runtime.JobReleased)
		require.NotEmpty(t, released)
		require.ErrorIs(t, released[0].Err, runtime.ErrNewerVersion)

		r2 := runtime.NewRouter()
		var attempts []int
		var mu sync.Mutex
		runtime.Register(r2, "test.Mail", func(ctx context.Context, j mailV2) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			attempts = append(attempts, info.Attempt)
			mu.Unlock()
			require.Equal(t, "new", j.Recipient)
			return nil
		}, runtime.UpgradeFrom(1, mailV1.Upgrade))
		b2 := b
		b2.router = r2
		_, stop2 := b2.start(t, runtime.WorkerConfig{Queues: []string{"mail"}})
		eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(attempts) == 1 }, "the version 2 worker runs the job")
		stop2()
		require.Equal(t, []int{1}, attempts, "the give-back used no attempt")
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "mail"))
		_ = ids
	})
}

// Every typed dispatch path writes the job's schema version into its
// envelope (newEnvelope): a version 1 worker gives back each version 2
// job, whatever path queued it, and runs none.
func TestVersionOnEveryDispatchPath(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		ran := 0
		var mu sync.Mutex
		runtime.Register(b.router, "test.Mail", func(ctx context.Context, j mailV1) error {
			mu.Lock()
			ran++
			mu.Unlock()
			return nil
		})
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error { return nil })
		v2 := func(s string) mailV2 { return mailV2{Recipient: s, Subject: "s"} }
		b.dispatch(t, v2("Dispatch"))
		_, err := runtime.DispatchMany(b.ctx, []mailV2{v2("DispatchMany")})
		require.NoError(t, err)
		env, err := runtime.NewPendingDispatch(v2("PushMany")).Envelope()
		require.NoError(t, err)
		require.Equal(t, 2, env.SchemaVersion)
		require.NoError(t, b.engine.PushMany(b.ctx, []runtime.Outgoing{{Envelope: env}}))
		_, err = runtime.Chain(onQueue(1, "mail"), v2("ChainLink")).Dispatch(b.ctx)
		require.NoError(t, err)
		_, err = runtime.NewBatch(v2("Batch")).Dispatch(b.ctx)
		require.NoError(t, err)
		w, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"mail"}})
		newer := func() map[string]bool {
			ids := map[string]bool{}
			for _, ev := range b.log.of(runtime.JobReleased) {
				if errors.Is(ev.Err, runtime.ErrNewerVersion) {
					ids[ev.ID] = true
				}
			}
			return ids
		}
		eventually(t, func() bool { return len(newer()) == 5 }, "each version 2 job is given back")
		stop()
		require.GreaterOrEqual(t, w.Stats().GivenBackNewer, int64(5))
		require.Zero(t, ran, "no version 2 job ran on the version 1 worker")
		require.Empty(t, b.failed(t, "mail"))
	})
}

// Embedded holds fields msgpack inlines into the struct that embeds it.
type Embedded struct{ A, B string }

// withEmbedded embeds a struct msgpack inlines.
type withEmbedded struct {
	Embedded
	At time.Time
	C  string `msgpack:"c,omitempty"`
}

// The strict decode knows the keys msgpack writes for embedded structs:
// a body that the struct's own encoding wrote decodes, and one that
// lacks an inlined field is named.
func TestDecodeEmbeddedFields(t *testing.T) {
	r := runtime.NewRouter()
	var got withEmbedded
	runtime.Register(r, "test.Embedded", func(ctx context.Context, j withEmbedded) error { got = j; return nil })
	want := withEmbedded{Embedded: Embedded{A: "a", B: "b"}, At: time.UnixMilli(1_700_000_000_000).UTC()}
	body, err := runtime.Encode(want)
	require.NoError(t, err)
	require.NoError(t, runBody(r, "test.Embedded", 0, body))
	require.True(t, want.At.Equal(got.At))
	require.Equal(t, want.Embedded, got.Embedded)
	err = runBody(r, "test.Embedded", 0, bodyOf(t, map[string]any{"A": "a", "At": time.Now()}))
	require.ErrorContains(t, err, `field Embedded.B (wire key "B", string) is missing`)
}

// mailCC is test.Mail of a newer build that added a field, CC: a
// compatible change, so its version is still 1.
type mailCC struct {
	To      string
	Subject string
	CC      string
}

// A worker of the build before a field was added gives back a body that
// carries the new field, its attempt unused, rather than fail it or run
// its handler without the field; a worker that knows the field runs it
// at attempt 1. A body with an unknown key dispatched longer ago than
// UnknownKeysWait, which no deploy explains, fails naming the key.
func TestDecodeUnknownKeyGivenBackForANewerBuild(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, b wbundle) {
		runtime.Register(b.router, "test.Mail", func(ctx context.Context, j mailV1) error {
			return errors.New("the older build ran a job without its CC")
		})
		body := bodyOf(t, map[string]any{"To": "a", "Subject": "s", "CC": "boss"})
		require.NoError(t, b.engine.Push(b.ctx, &runtime.Envelope{ID: runtime.NewID(), Name: "test.Mail", Queue: "mail", Tries: 1, Body: body}))
		old, stop := b.start(t, runtime.WorkerConfig{Queues: []string{"mail"}})
		eventually(t, func() bool { return old.Stats().GivenBackNewer >= 1 }, "the older worker gives the job back")
		stop()
		require.Empty(t, b.failed(t, "mail"), "a body of a newer build is not failed")

		r2 := runtime.NewRouter()
		var mu sync.Mutex
		var seen []mailCC
		var attempts []int
		runtime.Register(r2, "test.Mail", func(ctx context.Context, j mailCC) error {
			info, _ := runtime.JobInfoFrom(ctx)
			mu.Lock()
			defer mu.Unlock()
			seen, attempts = append(seen, j), append(attempts, info.Attempt)
			return nil
		})
		b2 := b
		b2.router = r2
		_, stop2 := b2.start(t, runtime.WorkerConfig{Queues: []string{"mail"}})
		eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 1 }, "the newer worker runs the job")
		stop2()
		require.Equal(t, []mailCC{{To: "a", Subject: "s", CC: "boss"}}, seen)
		require.Equal(t, []int{1}, attempts, "the give-back used no attempt")

		long := time.Now().Add(-runtime.UnknownKeysWait - time.Minute).UnixMilli()
		require.NoError(t, b.engine.Push(b.ctx, &runtime.Envelope{ID: runtime.NewID(), Name: "test.Mail", Queue: "mail", Tries: 5, Body: body, DispatchedAt: long}))
		b.runToEnd(t, runtime.WorkerConfig{Queues: []string{"mail"}, StopWhenEmpty: true})
		fs := b.failed(t, "mail")
		require.Len(t, fs, 1)
		require.Contains(t, fs[0].Error, `its body has key "CC" (a string), which its struct has no field for`)
	})
}
