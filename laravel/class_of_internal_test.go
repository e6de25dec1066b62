package laravel

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClassOf: the class a popped payload names, and whether a Go type
// is mapped to it; a payload that names none is not unmapped, so that
// the worker takes it and fails it.
func TestClassOf(t *testing.T) {
	t.Parallel()
	type mapped struct{ N int }
	type str struct{ S string }
	m := NewMapper()
	Map[mapped](m, `App\Jobs\Mapped`, "test.Mapped")
	MapString[str](m, `App\Jobs\Str@handle`, "test.Str")
	require.NoError(t, m.Err())
	for _, tc := range []struct {
		job, class string
		unmapped   bool
	}{
		{`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Mapped","command":"O:1:..."}}`, `App\Jobs\Mapped`, false},
		{`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\PhpOnly","command":"O:1:..."}}`, `App\Jobs\PhpOnly`, true},
		{`{"job":"App\\Jobs\\Str@handle","data":[]}`, `App\Jobs\Str@handle`, false},
		{`{"job":"App\\Jobs\\Other@handle","data":{"x":[1,2]}}`, `App\Jobs\Other@handle`, true},
		{`{"job":"App\\Jobs\\Other@handle","data":"text"}`, `App\Jobs\Other@handle`, true},
		{`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":[]}`, "", false}, // names no class: failed by the worker
		{`not json`, "", false},
		// Valid JSON, but no job: taken, and failed by the worker.
		{`[1,2,3]`, "", false},
		{`"hello"`, "", false},
		{`{}`, "", false},
		{`{"job":5,"data":{}}`, "", false},
		{`null`, "", false},
	} {
		class, unmapped := m.classOf([]byte(tc.job))
		require.Equal(t, tc.class, class, tc.job)
		require.Equal(t, tc.unmapped, unmapped, tc.job)
	}
}
