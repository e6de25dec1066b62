package load

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// notKeys are the fields of runtime.JobOptions that deliberately have no
// //job: key, each with the reason. There are none today; a field listed
// here must still be in model.Options and be emitted (see the model and
// emit tests).
var notKeys = map[string]string{}

// keyOf is the //job: key of a runtime.JobOptions field: its name in
// snake_case, MaxExceptions -> max_exceptions.
func keyOf(field string) string {
	var b strings.Builder
	for i, r := range field {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sampleValue is a valid //job: value for a field of type t.
func sampleValue(t *testing.T, typ reflect.Type) string {
	switch typ.String() {
	case "string":
		return "x"
	case "int":
		return "3"
	case "bool":
		return "true"
	case "time.Duration":
		return "5s"
	case "[]time.Duration":
		return "1s,2s"
	case "[]string":
		return "a,b"
	}
	t.Fatalf("no sample //job: value for a field of type %s: add one", typ)
	return ""
}

// TestEveryJobOptionHasAKey: every field of runtime.JobOptions, but those
// in notKeys, has a //job: key named after it that sets that field of
// the model, and every key but name and laravel sets a field.
func TestEveryJobOptionHasAKey(t *testing.T) {
	optionKeys := map[string]bool{}
	for f := range reflect.TypeFor[runtime.JobOptions]().Fields() {
		if reason, ok := notKeys[f.Name]; ok {
			require.NotEmpty(t, reason, "notKeys[%q] gives no reason", f.Name)
			continue
		}
		key := keyOf(f.Name)
		optionKeys[key] = true
		t.Run(key, func(t *testing.T) {
			require.Contains(t, keys, key, "runtime.JobOptions.%s has no //job: key", f.Name)
			var a annotation
			require.Empty(t, a.parseLine(key+"="+sampleValue(t, f.Type)))
			opts := reflect.ValueOf(a.opts)
			for g := range opts.Type().Fields() {
				set := !opts.FieldByIndex(g.Index).IsZero()
				require.Equal(t, g.Name == f.Name, set, "//job:%s=... sets model.Options.%s: %v", key, g.Name, set)
			}
		})
	}
	for _, key := range keys {
		// name is the job's wire name; laravel maps the job to a PHP class;
		// event, listen and sync make the type an event or a listener;
		// result names the type its handler returns; debounce_key names
		// the field that generates DebounceKey; group names the field that
		// holds the job's group (a JobGroup method); version, upgrade and
		// decode describe the job's wire schema (schema.go), not how it
		// is dispatched.
		if key != "name" && key != "laravel" && key != "event" && key != "listen" && key != "sync" && key != "result" && key != "debounce_key" && key != "group" &&
			key != "version" && key != "upgrade" && key != "decode" {
			require.True(t, optionKeys[key], "//job: key %s sets no field of runtime.JobOptions", key)
		}
	}
}
