package emit

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// render renders one fragment as jennifer formats it.
func render(c jen.Code) string { return fmt.Sprintf("%#v", c) }

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{time.Second, "time.Second"},
		{10 * time.Second, "10 * time.Second"},
		{time.Minute, "time.Minute"},
		{90 * time.Second, "90 * time.Second"},
		{90 * time.Minute, "90 * time.Minute"},
		{24 * time.Hour, "24 * time.Hour"},
		{1500 * time.Millisecond, "1500 * time.Millisecond"},
		{time.Millisecond, "time.Millisecond"},
		{3 * time.Microsecond, "3 * time.Microsecond"},
		{7, "7 * time.Nanosecond"},
		{time.Nanosecond, "time.Nanosecond"},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			require.Equal(t, tt.want, render(Duration(tt.d)))
		})
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		o    model.Options
		want string
	}{
		{"none", model.Options{}, "runtime.JobOptions{}"},
		{"one", model.Options{Queue: "emails"}, "runtime.JobOptions{\n\tQueue: \"emails\",\n}"},
		{
			"issue example",
			model.Options{Queue: "emails", Tries: 5, Backoff: []time.Duration{10 * time.Second, time.Minute}, Timeout: 30 * time.Second},
			`runtime.JobOptions{
	Queue:   "emails",
	Tries:   5,
	Backoff: []time.Duration{10 * time.Second, time.Minute},
	Timeout: 30 * time.Second,
}`,
		},
		{
			"every field, in runtime.JobOptions order",
			model.Options{
				Tags: []string{"a", "b"}, Encrypted: true, UniqueFor: time.Hour, Delay: time.Second,
				FailOnTimeout: true, MaxExceptions: 2, RetryUntil: 24 * time.Hour, Timeout: time.Minute,
				Backoff: []time.Duration{0}, Tries: 3, Connection: "c", Queue: "q",
			},
			`runtime.JobOptions{
	Queue:         "q",
	Connection:    "c",
	Tries:         3,
	Backoff:       []time.Duration{0},
	Timeout:       time.Minute,
	RetryUntil:    24 * time.Hour,
	MaxExceptions: 2,
	FailOnTimeout: true,
	Delay:         time.Second,
	UniqueFor:     time.Hour,
	Encrypted:     true,
	Tags:          []string{"a", "b"},
}`,
		},
		{"quoting", model.Options{Queue: `a"b`}, "runtime.JobOptions{\n\tQueue: \"a\\\"b\",\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, render(Options(tt.o)))
		})
	}
}

func TestRegisterCall(t *testing.T) {
	tests := []struct {
		name string
		job  model.Job
		want string
	}{
		{
			"through Handlers",
			model.Job{TypeName: "SendEmail", Name: "emails.SendEmail"},
			`runtime.Register[SendEmail](r, "emails.SendEmail", h.HandleSendEmail)`,
		},
		{
			"own Handle method",
			model.Job{TypeName: "Welcome", Name: "users.welcome", HandleMethod: true},
			`runtime.Register[Welcome](r, "users.welcome", runtime.HandleMethod[Welcome])`,
		},
		{
			"failed hook",
			model.Job{TypeName: "Charge", Name: "b.Charge", HandleMethod: true, FailedMethod: true},
			`runtime.Register[Charge](r, "b.Charge", runtime.HandleMethod[Charge], runtime.OnFailed(func(ctx context.Context, job Charge, err error) {
	job.Failed(ctx, err)
}))`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, render(RegisterCall(tt.job)))
		})
	}
}

func TestHandlers(t *testing.T) {
	p := &model.Package{Name: "emails", Jobs: []model.Job{
		{TypeName: "A", Name: "emails.A"},
		{TypeName: "B", Name: "emails.B", HandleMethod: true},
	}}
	require.Equal(t, `// Handlers handles the jobs of package emails that have no Handle method of
// their own, one method per job. Register routes each job to its method.
type Handlers interface {
	// HandleA handles A jobs (wire name "emails.A").
	HandleA(ctx context.Context, job A) error
}`, render(Handlers(p)))

	p.Jobs = p.Jobs[1:]
	require.Equal(t, `// Handlers is empty: every job of package emails has a Handle method of its
// own. Pass nil to Register.
type Handlers interface{}`, render(Handlers(p)))
}

func TestJobMethods(t *testing.T) {
	got := joined(JobMethods(model.Job{TypeName: "T", Name: "p.T", Options: model.Options{Tries: 2}}))
	require.Equal(t, `// JobName returns "p.T", the wire name the router knows T by.
func (T) JobName() string {
	return "p.T"
}

// JobOptions returns the defaults from the //job: annotation of T.
func (T) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{
		Tries: 2,
	}
}

// EncodeJob encodes the fields of the job with msgpack.
func (j T) EncodeJob() ([]byte, error) {
	return runtime.Encode(j)
}`, strings.TrimSpace(got))
}

func TestDispatchMethods(t *testing.T) {
	got := joined(DispatchMethods(model.Job{TypeName: "T", Name: "p.T"}))
	for _, want := range []string{
		"func (j T) Dispatch(ctx context.Context) (string, error) {\n\treturn runtime.Dispatch(ctx, j)\n}",
		"func (j T) DispatchTx(ctx context.Context, tx runtime.Tx) (string, error) {\n\treturn runtime.DispatchTx(ctx, tx, j)\n}",
		"func (j T) Delay(d time.Duration) *runtime.PendingDispatch {\n\treturn runtime.NewPendingDispatch(j).Delay(d)\n}",
		"func (j T) OnQueue(q string) *runtime.PendingDispatch {\n\treturn runtime.NewPendingDispatch(j).OnQueue(q)\n}",
		"func (j T) OnConnection(c string) *runtime.PendingDispatch {\n\treturn runtime.NewPendingDispatch(j).OnConnection(c)\n}",
		"func (j T) WithChain(jobs ...runtime.Job) *runtime.PendingDispatch {\n\treturn runtime.NewPendingDispatch(j).WithChain(jobs...)\n}",
		"func (j T) DispatchIf(ctx context.Context, cond bool) (string, error) {\n\treturn runtime.DispatchIf(ctx, cond, j)\n}",
		"func (j T) DispatchUnless(ctx context.Context, cond bool) (string, error) {\n\treturn runtime.DispatchUnless(ctx, cond, j)\n}",
		"func (j T) DispatchSync(ctx context.Context) error {\n\treturn runtime.DispatchSync(ctx, j)\n}",
	} {
		require.Contains(t, got, want)
	}
}

// joined renders fragments one after another, a blank line apart.
func joined(cs []jen.Code) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(render(c))
		b.WriteString("\n\n")
	}
	return b.String()
}

// TestMethodsMatchModel: the loader checks for clashes with
// model.Methods, so it must list exactly the methods emitted, in order.
func TestMethodsMatchModel(t *testing.T) {
	p := &model.Package{Name: "p", Path: "example.com/p", Jobs: []model.Job{{TypeName: "T", Name: "p.T"}}}
	src, err := File(p)
	require.NoError(t, err)
	f, err := parser.ParseFile(token.NewFileSet(), "jobs_gen.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	var methods, decls []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				methods = append(methods, d.Name.Name)
			} else {
				decls = append(decls, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					decls = append(decls, s.Name.Name)
				case *ast.ImportSpec:
					require.Nil(t, s.Name, "imports carry no alias")
					path := strings.Trim(s.Path.Value, `"`)
					decls = append(decls, path[strings.LastIndex(path, "/")+1:])
				}
			}
		}
	}
	require.Equal(t, model.Methods, methods)
	require.ElementsMatch(t, model.PackageNames, decls)

	// A job mapped to a PHP class adds LaravelNames.
	p.Jobs[0].Laravel = `App\Jobs\T`
	src, err = File(p)
	require.NoError(t, err)
	f, err = parser.ParseFile(token.NewFileSet(), "jobs_gen.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	decls = decls[:0]
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				decls = append(decls, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					decls = append(decls, s.Name.Name)
				case *ast.ImportSpec:
					path := strings.Trim(s.Path.Value, `"`)
					decls = append(decls, path[strings.LastIndex(path, "/")+1:])
				}
			}
		}
	}
	require.ElementsMatch(t, append(slices.Clone(model.PackageNames), model.LaravelNames...), decls)
}

// TestLocalsMatchModel: the loader rejects job types named like the
// generated code's parameters, listed in model.Locals.
func TestLocalsMatchModel(t *testing.T) {
	p := &model.Package{Name: "p", Path: "example.com/p", Jobs: []model.Job{
		{TypeName: "T", Name: "p.T", FailedMethod: true},
	}}
	src, err := File(p)
	require.NoError(t, err)
	f, err := parser.ParseFile(token.NewFileSet(), "jobs_gen.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	locals := map[string]bool{}
	add := func(fl *ast.FieldList) {
		for _, field := range fl.List {
			for _, id := range field.Names {
				locals[id.Name] = true
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Recv != nil {
				add(n.Recv)
			}
		case *ast.FuncType:
			add(n.Params)
		}
		return true
	})
	require.NotEmpty(t, locals)
	for name := range locals {
		require.Contains(t, model.Locals, name)
	}
}

func TestFile(t *testing.T) {
	p := &model.Package{Name: "p", Path: "example.com/p", Jobs: []model.Job{
		{TypeName: "A", Name: "p.A"}, {TypeName: "B", Name: "p.B", HandleMethod: true},
	}}
	src, err := File(p)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(src), "// "+model.Header+"\n\npackage p\n\nimport (\n\t\"context\"\n\t\"time\"\n\n\t\"github.com/jobgen/jobgen/runtime\"\n)\n"), "got:\n%s", src)
	again, err := File(p)
	require.NoError(t, err)
	require.Equal(t, src, again, "output is deterministic")
}

// TestEventMethodsMatchModel: the loader checks events and listeners for
// clashes with model.EventMethods and model.ListenerMethods.
func TestEventMethodsMatchModel(t *testing.T) {
	li := model.Listener{TypeName: "L", Name: "p.L", Event: "E"}
	p := &model.Package{Name: "p", Path: "example.com/p",
		Events:    []model.Event{{TypeName: "E", Listeners: []model.Listener{li}}},
		Listeners: []model.Listener{li},
	}
	src, err := File(p)
	require.NoError(t, err)
	f, err := parser.ParseFile(token.NewFileSet(), "jobs_gen.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	byType := map[string][]string{}
	for _, d := range f.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Recv != nil {
			typ := d.Recv.List[0].Type.(*ast.Ident).Name
			byType[typ] = append(byType[typ], d.Name.Name)
		}
	}
	require.Equal(t, map[string][]string{"E": model.EventMethods, "L": model.ListenerMethods}, byType)
}
