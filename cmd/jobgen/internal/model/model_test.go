package model

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
	"github.com/jobgen/jobgen/runtime"
)

// fieldsOf lists the fields of struct type t as "Name Type", in order.
func fieldsOf(t reflect.Type) []string {
	var fields []string
	for f := range t.Fields() {
		fields = append(fields, f.Name+" "+f.Type.String())
	}
	return fields
}

// TestOptionsFollowTheTable: Options has one field per option of
// jobopt.All, named and typed as the table says, in its order, and so
// does runtime.JobOptions; a field added to, removed from or renamed in
// one of them fails here until the table and the other follow. The
// //job: keys (load) and the emitted literal (emit) are read from the
// table, and checked by tests of their own.
func TestOptionsFollowTheTable(t *testing.T) {
	var want []string
	for _, o := range jobopt.All {
		want = append(want, o.Name+" "+o.Kind.GoType())
	}
	require.Equal(t, want, fieldsOf(reflect.TypeFor[Options]()), "model.Options must follow jobopt.All")
	require.Equal(t, want, fieldsOf(reflect.TypeFor[runtime.JobOptions]()), "runtime.JobOptions must follow jobopt.All")
}
