package laravel

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
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

// notInPayload are the options that the table gives no Laravel key and
// that the Dispatcher does not refuse, each with what becomes of it. An
// option added to the table without a Laravel key fails
// TestEveryOtherOptionIsRefusedOrAccountedFor until it is refused (the
// Dispatcher's doc: what the payload cannot carry is refused rather than
// dropped) or listed here.
var notInPayload = map[string]string{
	"Queue":      "the queue pushed to, which the command's queue property names too",
	"Connection": "chose this dispatcher (runtime.SetConnection)",
	"Delay":      "the delay of the push (Queue.Later), which the command's delay property holds too",
	"Tags":       "dropped: labels for monitoring, which Laravel's payload has no place for",
	"GroupLimit": "no effect on a job of no group; a job dispatched in a group is refused (TestGroupedJobIsRefused)",
	"UniqueFor":  "the lifetime of the unique lock the Dispatcher takes in the app's cache store, as Laravel's dispatch does (unique.go), outside the payload",
	"Needs":      "read only when a workflow adds the job as a step, which no Laravel payload is; jobgen refuses needs= beside laravel=",
}

// TestEveryOtherOptionIsRefusedOrAccountedFor: each option that the
// table carries in no Laravel payload, set alone, leaves the payload as
// it is and is either refused by the Dispatcher with runtime.ErrInvalid
// or listed in notInPayload.
func TestEveryOtherOptionIsRefusedOrAccountedFor(t *testing.T) {
	t.Parallel()
	m := NewMapper()
	Map[optionsJob](m, `App\Jobs\Options`, "test.Options")
	require.NoError(t, m.Err())
	mp := m.byType[reflect.TypeFor[optionsJob]()]
	now := time.Unix(1_800_000_000, 0)
	payload := func(opts runtime.JobOptions) Payload {
		b, _, err := mp.newPayload(optionsJob{N: 1}, opts, "default", 0, now)
		require.NoError(t, err)
		p, err := DecodePayload(b)
		require.NoError(t, err)
		p.UUID, p.ID = "", "" // random
		return p
	}
	plain := payload(runtime.JobOptions{})
	for _, o := range jobopt.All {
		if o.Laravel != "" {
			require.NotContains(t, notInPayload, o.Name, "%s has a Laravel key", o.Name)
			continue
		}
		t.Run(o.Name, func(t *testing.T) {
			var opts runtime.JobOptions
			reflect.ValueOf(&opts).Elem().FieldByName(o.Name).Set(reflect.ValueOf(o.Sample()))
			require.Equal(t, plain, payload(opts), "%s has no Laravel key, but changes the payload", o.Name)
			if reason, ok := notInPayload[o.Name]; ok {
				require.NotEmpty(t, reason)
				return
			}
			require.ErrorIs(t, refusal(&Dispatcher{m: m}, opts), runtime.ErrInvalid,
				"%s reaches no Laravel payload: refuse it in Dispatcher.Dispatch, give it a Laravel key in jobopt.All, or list it in notInPayload", o.Name)
		})
	}
	for name := range notInPayload {
		require.True(t, slices.ContainsFunc(jobopt.All, func(o jobopt.Option) bool { return o.Name == name }),
			"notInPayload[%q] is no option of jobopt.All", name)
	}
}

// optionsJob is a mapped job with the options it is given.
type optionsJob struct {
	N    int
	opts runtime.JobOptions
}

func (optionsJob) JobName() string                  { return "test.Options" }
func (j optionsJob) JobOptions() runtime.JobOptions { return j.opts }
func (j optionsJob) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }

// refusal dispatches a job with opts through d, which has no queue, and
// returns why d refuses it. A job d does not refuse goes on to push, to
// no queue: that is an error too.
func refusal(d *Dispatcher, opts runtime.JobOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("not refused: the dispatch went on to push (%v)", r)
		}
	}()
	_, err = d.Dispatch(context.Background(), runtime.NewPendingDispatch(optionsJob{opts: opts}))
	return err
}

// TestGroupedJobIsRefused: Laravel's queue has no fair groups, so a job
// dispatched in one is refused rather than pushed without its group.
func TestGroupedJobIsRefused(t *testing.T) {
	t.Parallel()
	m := NewMapper()
	Map[optionsJob](m, `App\Jobs\Options`, "test.Options")
	require.NoError(t, m.Err())
	d := &Dispatcher{m: m}
	_, err := d.Dispatch(context.Background(), runtime.NewPendingDispatch(optionsJob{}).OnGroup("tenant-1"))
	require.ErrorIs(t, err, runtime.ErrInvalid)
	require.ErrorContains(t, err, "group")
	_, err = d.Dispatch(context.Background(), runtime.NewPendingDispatch(optionsJob{}).OnGroup("tenant-1").WithGroupLimit(2))
	require.ErrorIs(t, err, runtime.ErrInvalid)
}
