package laravel

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
	"github.com/jobgen/jobgen/runtime"
)

type tableJob struct{ N int }

// TestEveryLaravelOptionReachesThePayload: each option that the table
// carries in a Laravel payload is written there by the mapper, under its
// key, when a Go process dispatches a mapped job with it set.
func TestEveryLaravelOptionReachesThePayload(t *testing.T) {
	t.Parallel()
	m := NewMapper()
	Map[tableJob](m, `App\Jobs\Table`, "test.Table")
	require.NoError(t, m.Err())
	mp := m.byType[reflect.TypeFor[tableJob]()]
	require.NotNil(t, mp)
	for _, o := range jobopt.All {
		if o.Laravel == "" {
			continue
		}
		t.Run(o.Name, func(t *testing.T) {
			var opts runtime.JobOptions
			reflect.ValueOf(&opts).Elem().FieldByName(o.Name).Set(reflect.ValueOf(o.Sample()))
			payload, _, err := mp.newPayload(tableJob{N: 1}, opts, "default", 0, time.Now())
			require.NoError(t, err)
			var fields map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(payload, &fields))
			v, ok := fields[o.Laravel]
			require.True(t, ok, "the payload has %q", o.Laravel)
			require.NotContains(t, []string{"null", "false"}, string(v), "the payload's %q carries %s", o.Laravel, o.Name)
		})
	}
}
