package model

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

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

// TestOptionsMirrorsJobOptions: Options is a hand copy of
// runtime.JobOptions. It must have the same fields, with the same types,
// in the same order; a field added to, removed from or renamed in one
// side fails here until the other side follows. The //job: keys (load)
// and the emitted literal (emit) are checked against runtime.JobOptions
// by tests of their own.
func TestOptionsMirrorsJobOptions(t *testing.T) {
	require.Equal(t,
		fieldsOf(reflect.TypeFor[runtime.JobOptions]()),
		fieldsOf(reflect.TypeFor[Options]()),
		"model.Options must mirror runtime.JobOptions")
}
