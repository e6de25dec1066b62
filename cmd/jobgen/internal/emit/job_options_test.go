package emit

import (
	"go/ast"
	"go/parser"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
	"github.com/jobgen/jobgen/runtime"
)

// nonZero sets v, a zero value, to one that is not zero.
func nonZero(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64: // Int64: time.Duration
		v.SetInt(3)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		nonZero(t, v.Index(0))
	default:
		t.Fatalf("no non-zero value for a field of type %s: add one", v.Type())
	}
}

// TestOptionsEmitsEveryJobOption: with every field of model.Options set,
// the emitted literal sets every field of runtime.JobOptions, in the
// order runtime.JobOptions declares them.
func TestOptionsEmitsEveryJobOption(t *testing.T) {
	var o model.Options
	ov := reflect.ValueOf(&o).Elem()
	for i := range ov.NumField() {
		nonZero(t, ov.Field(i))
	}
	src := render(Options(o))
	expr, err := parser.ParseExpr(src)
	require.NoError(t, err, src)
	var got []string
	for _, elt := range expr.(*ast.CompositeLit).Elts {
		got = append(got, elt.(*ast.KeyValueExpr).Key.(*ast.Ident).Name)
	}
	var want []string
	for f := range reflect.TypeFor[runtime.JobOptions]().Fields() {
		want = append(want, f.Name)
	}
	require.Equal(t, want, got, "the fields of the emitted literal:\n%s", src)
}
