package jobopt_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
	"github.com/jobgen/jobgen/runtime"
)

// TestJobOptionsDocsAreTheTables: each field of runtime.JobOptions is
// documented as the table says, so that an option's doc is written once.
func TestJobOptionsDocsAreTheTables(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../../runtime/job.go", nil, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "JobOptions" {
			return true
		}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			docs[fld.Names[0].Name] = strings.Join(strings.Fields(fld.Doc.Text()), " ")
		}
		return false
	})
	require.Len(t, docs, len(jobopt.All), "runtime.JobOptions has a field per option")
	for _, o := range jobopt.All {
		require.Equal(t, o.Name+" "+o.Doc, docs[o.Name], "the doc of JobOptions.%s", o.Name)
	}
}

// TestEnvelopeCarriesTheTable: every option the table sends to the
// worker has its field in runtime.Envelope, tagged with its wire key,
// and its wire key is one option's alone.
func TestEnvelopeCarriesTheTable(t *testing.T) {
	t.Parallel()
	env := reflect.TypeFor[runtime.Envelope]()
	wire := map[string]string{}
	for _, o := range jobopt.All {
		if o.Envelope == "" {
			require.Empty(t, o.Wire, o.Name)
			continue
		}
		f, ok := env.FieldByName(o.Envelope)
		require.True(t, ok, "runtime.Envelope has no field %s for option %s", o.Envelope, o.Name)
		require.NotEmpty(t, o.Wire, o.Name)
		// The codec writes by hand what reflection would from the tags.
		tag, _, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
		require.Equal(t, o.Wire, tag, "the msgpack tag of runtime.Envelope.%s", o.Envelope)
		require.NotContains(t, wire, o.Wire, "wire key %q of %s is %s's too", o.Wire, o.Name, wire[o.Wire])
		wire[o.Wire] = o.Name
	}
}

// TestKeysAreUnique: no two options share a //job: key.
func TestKeysAreUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, o := range jobopt.All {
		require.False(t, seen[o.Key], o.Key)
		seen[o.Key] = true
		got, ok := jobopt.ByKey(o.Key)
		require.True(t, ok)
		require.Equal(t, o.Name, got.Name)
	}
}
