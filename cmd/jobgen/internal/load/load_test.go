package load

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// writeModule writes files (name -> content) into a new module
// example.com/jobs and returns its directory.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/jobs\n\ngo 1.26\n"
	for name, src := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	return dir
}

// loadSource loads one package made of jobs.go holding src.
func loadSource(t *testing.T, src string) (*model.Package, error) {
	t.Helper()
	return loadFiles(t, map[string]string{"jobs.go": src})
}

func loadFiles(t *testing.T, files map[string]string) (*model.Package, error) {
	t.Helper()
	pkgs, err := Load(Config{Dir: writeModule(t, files)})
	if err != nil {
		return nil, err
	}
	require.Len(t, pkgs, 1)
	return pkgs[0], nil
}

// problems returns err's problems as "file:line:col: message", with the
// file's base name.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var list List
	require.True(t, errors.As(err, &list), "want a List, got %v", err)
	var out []string
	for _, e := range list {
		out = append(out, fmt.Sprintf("%s:%d:%d: %s", filepath.Base(e.Pos.Filename), e.Pos.Line, e.Pos.Column, e.Msg))
	}
	return out
}

func TestLoad(t *testing.T) {
	t.Parallel()
	p, err := loadSource(t, `package mail

import "context"

// Welcome handles itself.
//
//job:queue=emails name=users.welcome
type Welcome struct{ UserID int64 }

func (j Welcome) Handle(ctx context.Context) error { return nil }

// SendEmail has a failed hook with a pointer receiver, which is fine.
//
//job:queue=emails tries=5 backoff=10s,1m timeout=30s
type SendEmail struct {
	To      string
	Body    string `+"`msgpack:\"body\"`"+`
	private int
}

func (j *SendEmail) Failed(ctx context.Context, err error) {}

// Plain is not a job.
type Plain struct{}

type (
	// Grouped is a job inside a type group.
	//
	// job:
	Grouped struct{ N int }
)
`)
	require.NoError(t, err)
	require.Equal(t, "mail", p.Name)
	require.Equal(t, "example.com/jobs", p.Path)
	require.Equal(t, []model.Job{
		{TypeName: "Grouped", Name: "mail.Grouped"},
		{TypeName: "SendEmail", Name: "mail.SendEmail", FailedMethod: true, Options: model.Options{
			Queue: "emails", Tries: 5, Backoff: []time.Duration{10 * time.Second, time.Minute}, Timeout: 30 * time.Second,
		}},
		{TypeName: "Welcome", Name: "users.welcome", HandleMethod: true, Options: model.Options{Queue: "emails"}},
	}, p.Jobs)
}

func TestLoadNoJobs(t *testing.T) {
	t.Parallel()
	p, err := loadSource(t, "package mail\n\n// A job: not an annotation.\ntype T struct{}\n")
	require.NoError(t, err)
	require.Empty(t, p.Jobs)
}

// TestLoadHidesOutput: earlier output is left out, even when stale and
// broken, and code using the generated methods does not stop loading.
func TestLoadHidesOutput(t *testing.T) {
	t.Parallel()
	p, err := loadFiles(t, map[string]string{
		"jobs.go": `package mail

import "context"

//job:queue=emails
type SendEmail struct{ To string }

// Later uses generated methods.
func Later(ctx context.Context) error {
	_, err := SendEmail{To: "a"}.Delay(0).Dispatch(ctx)
	return err
}
`,
		model.OutputFile: "// " + model.Header + "\n\npackage mail\n\nfunc (SendEmail) JobName() string { return Removed{}.x }\n",
	})
	require.NoError(t, err)
	require.Equal(t, []model.Job{{TypeName: "SendEmail", Name: "mail.SendEmail", Options: model.Options{Queue: "emails"}}}, p.Jobs)
}

// TestLoadForeignOutput: a jobs_gen.go that jobgen did not write is
// ordinary code, so its methods clash.
func TestLoadForeignOutput(t *testing.T) {
	t.Parallel()
	_, err := loadFiles(t, map[string]string{
		"jobs.go":        "package mail\n\n//job:\ntype SendEmail struct{ To string }\n",
		model.OutputFile: "package mail\n\nfunc (SendEmail) JobName() string { return \"x\" }\n",
	})
	require.Equal(t, []string{
		"jobs_gen.go:3:18: method SendEmail.JobName clashes with the method of that name that jobgen generates on every job; rename it",
	}, problems(t, err))
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	validKeys := "valid keys: " + strings.Join(wantKeys(), ", ")
	tests := []struct {
		name string
		src  string // the body of jobs.go after "package mail\n\n"
		want []string
	}{
		{
			name: "unknown key",
			src:  "//job:queue=emails queu=x\ntype T struct{ A int }\n",
			want: []string{`jobs.go:3:20: unknown key "queu" in //job: annotation; ` + validKeys},
		},
		{
			name: "result type missing",
			src:  "//job:result=Receipt\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:6: T has result=Receipt, but package mail declares no type Receipt"},
		},
		{
			name: "result with a Handle method that returns none",
			src:  "type R struct{ B int }\n\n//job:result=R\ntype T struct{ A int }\n\nfunc (T) Handle(ctx context.Context) error { return nil }\n",
			want: []string{"jobs.go:8:10: T.Handle is not Handle(ctx context.Context) (R, error), as result=R wants; give it that signature to handle the job itself, or rename it"},
		},
		{
			name: "debounce without a key",
			src:  "//job:debounce=30s\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:6: T sets debounce without a key: add debounce_key=Field, the field whose value keys a burst of dispatches (such as debounce_key=UserID), or give it a method DebounceKey() string"},
		},
		{
			name: "debounce with a bad duration",
			src:  "//job:debounce=30 debounce_key=A\ntype T struct{ A int }\n",
			want: []string{"jobs.go:3:7: debounce=30: want a positive Go duration such as 30s, 5m or 1h30m"},
		},
		{
			name: "debounce key of an unknown field",
			src:  "//job:debounce=30s debounce_key=UserID\ntype T struct{ A, B int }\n",
			want: []string{"jobs.go:4:6: debounce_key=UserID: T has no field UserID; its fields: A, B"},
		},
		{
			name: "debounce key of a field that makes no key",
			src:  "//job:debounce=30s debounce_key=A\ntype T struct{ A []int }\n",
			want: []string{"jobs.go:4:6: debounce_key=A: field T.A is a []int; a debounce key is a string, a number, a bool or a fmt.Stringer"},
		},
		{
			name: "debounce key that is no field name",
			src:  "//job:debounce=30s debounce_key=a.b\ntype T struct{ A int }\n",
			want: []string{"jobs.go:3:20: debounce_key=a.b: want the name of a field of the job, such as debounce_key=UserID"},
		},
		{
			name: "debounce key without debounce",
			src:  "//job:debounce_key=A\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:6: T sets debounce_key or debounce_max_wait without debounce: add debounce=30s (its window), or drop them"},
		},
		{
			name: "debounce and unique",
			src:  "//job:debounce=30s debounce_key=A unique_for=1h\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:6: T sets both debounce and unique_for: a unique job keeps the first dispatch, a debounced one the last; use one of them"},
		},
		{
			name: "debounce max wait below the window",
			src:  "//job:debounce=30s debounce_key=A debounce_max_wait=10s\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:6: T: debounce_max_wait (10s) must be at least debounce (30s)"},
		},
		{
			name: "group field missing",
			src:  "//job:group=Tenant\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:6: group=Tenant: T has no field Tenant; its fields: A"},
		},
		{
			name: "group field of another type",
			src:  "//job:group=A\ntype T struct{ A float64 }\n",
			want: []string{"jobs.go:4:16: group=A: field T.A is of type float64; the group must be a string or an integer"},
		},
		{
			name: "group not a field name",
			src:  "//job:group=a.b\ntype T struct{ A int }\n",
			want: []string{"jobs.go:3:7: group=a.b: want the name of a string or integer field of the job, such as group=TenantID"},
		},
		{
			name: "group_limit without group",
			src:  "//job:group_limit=2\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:6: T: group_limit=2 limits the jobs of one group, but the annotation names no group; add group=Field, the field that holds the group (a customer or API token)"},
		},
		{
			name: "group with a JobGroup method",
			src:  "//job:group=A\ntype T struct{ A string }\n\nfunc (T) JobGroup() string { return \"\" }\n",
			want: []string{"jobs.go:6:10: T has a method JobGroup, which group=A generates; remove one of them"},
		},
		{
			name: "bad value",
			src:  "// T is a job.\n//\n//job:tries=many\ntype T struct{ A int }\n",
			want: []string{"jobs.go:5:7: tries=many: want a whole number of at least 1"},
		},
		{
			name: "bad duration on a second line",
			src:  "//job:queue=a\n//job:timeout=30\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:7: timeout=30: want a positive Go duration such as 30s, 5m or 1h30m"},
		},
		{
			name: "key set twice across lines",
			src:  "//job:queue=a\n//job:queue=b\ntype T struct{ A int }\n",
			want: []string{"jobs.go:4:7: key queue is set twice"},
		},
		{
			name: "space after the prefix",
			src:  "//job: queue=emails\ntype T struct{ A int }\n",
			want: []string{`jobs.go:3:1: write the annotation as //job:queue=emails, with no space after // or after the colon: gofmt turns "//job: queue=emails" into a plain comment`},
		},
		{
			name: "annotation gofmt broke",
			src:  "// job: queue=emails\ntype T struct{ A int }\n",
			want: []string{`jobs.go:3:1: write the annotation as //job:queue=emails, with no space after // or after the colon: gofmt turns "// job: queue=emails" into a plain comment`},
		},
		{
			name: "duplicate job name",
			src:  "//job:name=mail.send\ntype A struct{ X int }\n\n//job:name=mail.send\ntype B struct{ X int }\n",
			want: []string{`jobs.go:7:6: job name "mail.send" of B is also the name of A (jobs.go:4); set a distinct name= on one of them`},
		},
		{
			name: "explicit name equal to a default one",
			src:  "//job:\ntype A struct{ X int }\n\n//job:name=mail.A\ntype B struct{ X int }\n",
			want: []string{`jobs.go:7:6: job name "mail.A" of B is also the name of A (jobs.go:4); set a distinct name= on one of them`},
		},
		{
			name: "not a struct",
			src:  "//job:\ntype ID int\n",
			want: []string{"jobs.go:4:6: ID is not a struct (its type is int); //job: belongs on a struct type"},
		},
		{
			name: "not a struct: a map",
			src:  "//job:\ntype M map[string]int\n",
			want: []string{"jobs.go:4:6: M is not a struct (its type is map[string]int); //job: belongs on a struct type"},
		},
		{
			name: "alias",
			src:  "type T struct{ A int }\n\n//job:\ntype U = T\n",
			want: []string{"jobs.go:6:6: U is an alias; put //job: on the struct type it stands for"},
		},
		{
			name: "generic",
			src:  "//job:\ntype T[V any] struct{ A V }\n",
			want: []string{"jobs.go:4:6: T is generic; a job type must not have type parameters, since the worker decodes into one concrete type"},
		},
		{
			name: "type named like a parameter of the generated code",
			src:  "//job:\ntype job struct{ A int }\n",
			want: []string{"jobs.go:4:6: job is a name the generated code uses for a parameter (c, cond, ctx, d, e, err, h, id, j, job, jobs, q, r, t, tx); give the job type another name"},
		},
		{
			name: "channel field",
			src:  "//job:\ntype T struct {\n\tA    int\n\tDone chan bool\n}\n",
			want: []string{"jobs.go:6:2: field Done has type chan bool: msgpack cannot encode a channel" + crossFix},
		},
		{
			name: "func field",
			src:  "//job:\ntype T struct {\n\tNotify func(string)\n}\n",
			want: []string{"jobs.go:5:2: field Notify has type func(string): msgpack cannot encode a func" + crossFix},
		},
		{
			name: "complex, uintptr and unsafe.Pointer",
			src:  "import \"unsafe\"\n\n//job:\ntype T struct {\n\tC complex128\n\tU uintptr\n\tP unsafe.Pointer\n}\n",
			want: []string{
				"jobs.go:7:2: field C has type complex128: msgpack cannot encode a complex number" + crossFix,
				"jobs.go:8:2: field U has type uintptr: msgpack cannot encode a uintptr" + crossFix,
				"jobs.go:9:2: field P has type unsafe.Pointer: msgpack cannot encode an unsafe.Pointer" + crossFix,
			},
		},
		{
			name: "nested through slices, pointers and structs",
			src:  "//job:\ntype T struct {\n\tItems []*Item\n}\n\ntype Item struct {\n\tName  string\n\tHooks [2]Hook\n}\n\ntype Hook struct{ Run func() }\n",
			want: []string{"jobs.go:5:2: field Items[].Hooks[].Run has type func(): msgpack cannot encode a func" + crossFix},
		},
		{
			name: "map keys and values",
			src:  "//job:\ntype T struct {\n\tByChan map[chan int]string\n\tToFunc map[string]func()\n}\n",
			want: []string{
				"jobs.go:5:2: field ByChan[key] has type chan int: msgpack cannot encode a channel" + crossFix,
				"jobs.go:6:2: field ToFunc[] has type func(): msgpack cannot encode a func" + crossFix,
			},
		},
		{
			name: "embedded struct",
			src:  "//job:\ntype T struct {\n\tbase\n}\n\ntype base struct{ Cb func() }\n",
			want: []string{"jobs.go:5:2: field base.Cb has type func(): msgpack cannot encode a func" + crossFix},
		},
		{
			name: "no exported field",
			src:  "//job:\ntype T struct {\n\tto   string\n\tSkip string `msgpack:\"-\"`\n}\n",
			want: []string{"jobs.go:4:6: T has no exported field: msgpack carries only exported fields to the worker, so the job would arrive empty; export the fields it needs"},
		},
		{
			name: "field named like a generated method",
			src:  "import \"time\"\n\n//job:\ntype T struct {\n\tTo    string\n\tDelay time.Duration\n}\n",
			want: []string{"jobs.go:8:2: field T.Delay clashes with the method Delay that jobgen generates on every job; rename the field"},
		},
		{
			name: "method named like a generated method",
			src:  "import \"context\"\n\n//job:\ntype T struct{ A int }\n\nfunc (t *T) Dispatch(ctx context.Context) error { return nil }\n",
			want: []string{"jobs.go:8:13: method T.Dispatch clashes with the method of that name that jobgen generates on every job; rename it"},
		},
		{
			name: "Handle with another signature",
			src:  "//job:\ntype T struct{ A int }\n\nfunc (t T) Handle() error { return nil }\n",
			want: []string{"jobs.go:6:12: T.Handle is not Handle(ctx context.Context) error; give it that signature to handle the job itself, or rename it"},
		},
		{
			name: "Handle with a pointer receiver",
			src:  "import \"context\"\n\n//job:\ntype T struct{ A int }\n\nfunc (t *T) Handle(ctx context.Context) error { return nil }\n",
			want: []string{"jobs.go:8:13: T.Handle has a pointer receiver; declare it on the value, func (j T) Handle(ctx context.Context) error, since jobs reach their handler by value"},
		},
		{
			name: "Failed with another signature",
			src:  "//job:\ntype T struct{ A int }\n\nfunc (t T) Failed(err error) {}\n",
			want: []string{"jobs.go:6:12: T.Failed is not Failed(ctx context.Context, err error); give it that signature to make it the job's failed hook, or rename it"},
		},
		{
			name: "annotated func",
			src:  "//job:\nfunc F() {}\n",
			want: []string{"jobs.go:3:1: //job: annotates func F; it belongs on a struct type"},
		},
		{
			name: "annotated var",
			src:  "//job:\nvar V struct{ A int }\n",
			want: []string{"jobs.go:3:1: //job: annotates a var declaration; it belongs on a struct type"},
		},
		{
			name: "annotated type group",
			src:  "//job:\ntype (\n\tA struct{ X int }\n)\n",
			want: []string{"jobs.go:3:1: //job: annotates a group of types; put it in the doc comment of each job type inside the group"},
		},
		{
			name: "detached annotation",
			src:  "//job:queue=x\n\ntype T struct{ A int }\n",
			want: []string{"jobs.go:3:1: //job: annotation is not in the doc comment of a package-level type (is there a blank line between it and the type?)"},
		},
		{
			name: "annotation on a local type",
			src:  "func f() {\n\t//job:\n\ttype T struct{ A int }\n\t_ = T{}\n}\n",
			want: []string{"jobs.go:4:2: //job: annotation is not in the doc comment of a package-level type (is there a blank line between it and the type?)"},
		},
		{
			name: "package-level name the generated file declares",
			src:  "//job:\ntype T struct{ A int }\n\nfunc Register() {}\n\nvar runtime = 1\n",
			want: []string{
				"jobs.go:6:6: package-level Register clashes with the generated jobs_gen.go, which declares Handlers and Register and imports context, time and github.com/jobgen/jobgen/runtime; rename it",
				"jobs.go:8:5: package-level runtime clashes with the generated jobs_gen.go, which declares Handlers and Register and imports context, time and github.com/jobgen/jobgen/runtime; rename it",
			},
		},
		{
			name: "several problems at once",
			src:  "//job:tries=0\ntype A struct{ X int }\n\n//job:\ntype B int\n",
			want: []string{
				"jobs.go:3:7: tries=0: want a whole number of at least 1",
				"jobs.go:7:6: B is not a struct (its type is int); //job: belongs on a struct type",
			},
		},
		{
			name: "syntax error",
			src:  "//job:\ntype T struct{ A int }\n\nfunc f() {\n",
			want: []string{"jobs.go:6:12: expected ';', found 'EOF'", "jobs.go:6:12: expected '}', found 'EOF'"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadSource(t, "package mail\n\n"+tt.src)
			require.Error(t, err)
			require.Equal(t, tt.want, problems(t, err))
		})
	}
}

func TestLoadEncodable(t *testing.T) {
	t.Parallel()
	// None of these is an error: msgpack encodes them, or they encode
	// themselves, or msgpack skips them.
	p, err := loadSource(t, `package mail

import (
	"encoding/json"
	"time"
)

//job:
type T struct {
	When     time.Time
	Raw      json.RawMessage
	Any      any
	Err      error
	Tree     *Node
	Custom   Custom
	Skipped  func() `+"`msgpack:\"-\"`"+`
	private  chan int
	Matrix   [][2]float32
	Labels   map[string][]string
}

type Node struct {
	Children []*Node
	Value    int
}

// Custom encodes itself, so its func field is never seen by msgpack.
type Custom struct{ f func() }

func (c Custom) MarshalBinary() ([]byte, error) { return nil, nil }
`)
	require.NoError(t, err)
	require.Len(t, p.Jobs, 1)
}
