package runtime

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
)

// optionsJob is a job with the options it is given.
type optionsJob struct{ opts JobOptions }

func (optionsJob) JobName() string            { return "test.Options" }
func (j optionsJob) JobOptions() JobOptions   { return j.opts }
func (optionsJob) EncodeJob() ([]byte, error) { return []byte{0x80}, nil }

// TestEveryOptionTravelsToTheWorker: each option that the table sends to
// the worker is copied from JobOptions into the envelope at dispatch,
// written under its wire key in both of the envelope's forms, and read
// back by the worker's decoder.
func TestEveryOptionTravelsToTheWorker(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	for _, o := range jobopt.All {
		if o.Envelope == "" {
			continue
		}
		t.Run(o.Name, func(t *testing.T) {
			var opts JobOptions
			reflect.ValueOf(&opts).Elem().FieldByName(o.Name).Set(reflect.ValueOf(o.Sample()))
			queue := "q"
			if o.Name == "Queue" {
				queue = "x" // the queue the dispatch resolves to
			}
			env, err := newEnvelope(optionsJob{opts}, queue, opts.Connection, now)
			require.NoError(t, err)
			got := reflect.ValueOf(env).Elem().FieldByName(o.Envelope)
			require.False(t, got.IsZero(), "the dispatch copies %s into Envelope.%s", o.Name, o.Envelope)

			stored, err := env.EncodeStored("elsewhere") // a queue of another name, so the queue is written too
			require.NoError(t, err)
			whole, err := env.Encode()
			require.NoError(t, err)
			key := append([]byte{0xa0 | byte(len(o.Wire))}, o.Wire...) // a msgpack fixstr
			for form, b := range map[string][]byte{"stored": stored, "whole": whole} {
				require.True(t, bytes.Contains(b, key), "the %s form writes %s under %q", form, o.Name, o.Wire)
			}
			back, err := DecodeEnvelope("elsewhere", env.ID, stored)
			require.NoError(t, err)
			require.Equal(t, got.Interface(), reflect.ValueOf(back).Elem().FieldByName(o.Envelope).Interface(), "decoded %s", o.Envelope)
		})
	}
}
