package load

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// crossFix ends the message of a field that cannot cross a queue.
const crossFix = ", so it cannot cross a queue; " + carryData

// TestLoadLostInTransit: a field whose value msgpack encodes but the
// handler would not get back (a struct of unexported fields only, such
// as sql.DB or sync.Mutex, or an interface that msgpack cannot fill) is
// an error at the field, naming it, its type and a way forward.
func TestLoadLostInTransit(t *testing.T) {
	t.Parallel()
	iface := func(field, typ string) string {
		return "field " + field + " has type " + typ + ": " + typ + " is an interface, and msgpack decodes into one only the types registered with msgpack.RegisterExt, " +
			"of which neither package mail nor the interface's own registers any that implements it, so it cannot cross a queue; " +
			"carry a concrete type, or register the types it holds with msgpack.RegisterExt in package mail or the interface's"
	}
	tests := []struct {
		name string
		src  string // the body of jobs.go after "package mail\n\n"
		want []string
	}{
		{
			name: "a database handle",
			src:  "import \"database/sql\"\n\n//job:\ntype T struct {\n\tUserID int64\n\tDB     *sql.DB\n}\n",
			want: []string{"jobs.go:8:2: field DB has type *database/sql.DB: database/sql.DB has no exported field, so msgpack carries nothing of it and the handler gets an empty one" + crossFix},
		},
		{
			name: "a mutex and a wait group",
			src:  "import \"sync\"\n\n//job:\ntype T struct {\n\tA  int\n\tMu sync.Mutex\n\tWG *sync.WaitGroup\n}\n",
			want: []string{
				"jobs.go:8:2: field Mu has type sync.Mutex: sync.Mutex has no exported field, so msgpack carries nothing of it and the handler gets an empty one" + crossFix,
				"jobs.go:9:2: field WG has type *sync.WaitGroup: sync.WaitGroup has no exported field, so msgpack carries nothing of it and the handler gets an empty one" + crossFix,
			},
		},
		{
			name: "a struct of the package with unexported fields only, in a slice",
			src:  "//job:\ntype T struct {\n\tPrices []money\n}\n\ntype money struct{ cents int64 }\n",
			want: []string{"jobs.go:5:2: field Prices[] has type money: money has no exported field, so msgpack carries nothing of it and the handler gets an empty one" + crossFix},
		},
		{
			name: "an embedded struct with unexported fields only",
			src:  "//job:\ntype T struct {\n\tA int\n\tbase\n}\n\ntype base struct{ id int }\n",
			want: []string{"jobs.go:6:2: field base has type base: base has no exported field, so msgpack carries nothing of it and the handler gets an empty one" + crossFix},
		},
		{
			name: "a time zone",
			src:  "import \"time\"\n\n//job:\ntype T struct {\n\tWhen time.Time\n\tZone *time.Location\n}\n",
			want: []string{"jobs.go:8:2: field Zone has type *time.Location: time.Location has no exported field, so msgpack carries nothing of it and the handler gets an empty one" + crossFix},
		},
		{
			name: "interfaces",
			src:  "import (\n\t\"encoding\"\n\t\"fmt\"\n\t\"io\"\n)\n\n//job:\ntype T struct {\n\tName fmt.Stringer\n\tBody io.Reader\n\tAll  map[string]Shape\n\tText encoding.TextMarshaler\n}\n\ntype Shape interface{ Area() float64 }\n",
			want: []string{
				"jobs.go:11:2: " + iface("Name", "fmt.Stringer"),
				"jobs.go:12:2: " + iface("Body", "io.Reader"),
				"jobs.go:13:2: " + iface("All[]", "Shape"),
				"jobs.go:14:2: " + iface("Text", "encoding.TextMarshaler"),
			},
		},
		{
			name: "a result with unexported fields only",
			src:  "import \"context\"\n\n//job:result=R\ntype T struct{ A int }\n\ntype R struct{ total int }\n\nfunc (T) Handle(ctx context.Context) (R, error) { return R{}, nil }\n",
			want: []string{"jobs.go:6:6: result=R: field R has type R: R has no exported field, so msgpack carries nothing of it and the handler gets an empty one" + crossFix},
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

// TestLoadCrossesIntact: what msgpack carries and gives back loads
// without a problem: any and error, a struct whose unexported fields
// are only blank ones, types that encode themselves, and an interface
// that a type the package registers with msgpack.RegisterExt
// implements.
func TestLoadCrossesIntact(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"jobs.go": `package mail

import (
	"math/big"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

//job:
type T struct {
	Any    any
	Err    error
	Marker marker
	When   time.Time
	N      *big.Int
	Shapes []Shape
}

type marker struct{ _ struct{} }

type Shape interface{ Area() int }

type Circle struct{ R int }

func (c *Circle) Area() int                       { return c.R }
func (c *Circle) MarshalMsgpack() ([]byte, error) { return msgpack.Marshal(c.R) }
func (c *Circle) UnmarshalMsgpack(b []byte) error { return msgpack.Unmarshal(b, &c.R) }

func init() { msgpack.RegisterExt(1, (*Circle)(nil)) }
`,
	}
	pkgs, err := loadMsgpackModule(t, files)
	require.NoError(t, err)
	require.Len(t, pkgs, 1)
	require.Len(t, pkgs[0].Jobs, 1)
}

// TestLoadInterfaceOfAnotherPackage: an interface of a package that
// registers types with msgpack.RegisterExt, as a package whose
// implementations register themselves does, may be carried; one of a
// package that registers none may not.
func TestLoadInterfaceOfAnotherPackage(t *testing.T) {
	t.Parallel()
	_, err := loadMsgpackModule(t, map[string]string{
		"shapes/shapes.go": `package shapes

import mp "github.com/vmihailenco/msgpack/v5"

type Shape interface{ Area() int }

type Circle struct{ R int }

func (c *Circle) Area() int                       { return c.R }
func (c *Circle) MarshalMsgpack() ([]byte, error) { return mp.Marshal(c.R) }
func (c *Circle) UnmarshalMsgpack(b []byte) error { return mp.Unmarshal(b, &c.R) }

func init() { mp.RegisterExt(1, (*Circle)(nil)) }
`,
		"plain/plain.go": "package plain\n\ntype Named interface{ Name() string }\n",
		"jobs.go": `package mail

import (
	"example.com/jobs/plain"
	"example.com/jobs/shapes"
)

//job:
type T struct{ Shapes []shapes.Shape }

//job:
type U struct{ Who plain.Named }
`,
	})
	require.Equal(t, []string{"jobs.go:12:16: field Who has type example.com/jobs/plain.Named: example.com/jobs/plain.Named is an interface, and msgpack decodes into one only the types registered with msgpack.RegisterExt, " +
		"of which neither package mail nor the interface's own registers any that implements it, so it cannot cross a queue; " +
		"carry a concrete type, or register the types it holds with msgpack.RegisterExt in package mail or the interface's"}, problems(t, err))
}

// loadMsgpackModule loads the root package of a module example.com/jobs
// that requires msgpack, made of files (path -> content).
func loadMsgpackModule(t *testing.T, files map[string]string) ([]*model.Package, error) {
	t.Helper()
	root, err := filepath.Abs("../../../..")
	require.NoError(t, err)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	dir := t.TempDir()
	files["go.mod"] = "module example.com/jobs\n\ngo 1.26\n\nrequire github.com/vmihailenco/msgpack/v5 v5.4.1\n\nrequire github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect\n"
	files["go.sum"] = string(sum)
	for name, src := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
	return Load(Config{Dir: dir, Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")})
}
