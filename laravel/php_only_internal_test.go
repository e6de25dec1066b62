package laravel

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel/phpserial"
)

// TestPHPOnly: which first jobs a Go worker leaves for Laravel's, and
// why; a payload that is no job is taken, to be failed.
func TestPHPOnly(t *testing.T) {
	t.Parallel()
	type mapped struct {
		N int `php:"n"`
	}
	type str struct{ S string }
	m := NewMapper()
	Map[mapped](m, `App\Jobs\Mapped`, "test.Mapped")
	MapString[str](m, `App\Jobs\Str@handle`, "test.Str")
	require.NoError(t, m.Err())

	// job is a payload of App\Jobs\Mapped with props set on its command,
	// and data.batchId if batchID is not "".
	job := func(batchID string, props ...phpserial.Prop) string {
		o := &phpserial.Object{Class: `App\Jobs\Mapped`, Props: append([]phpserial.Prop{{Name: "n", Value: int64(1)}}, props...)}
		cmd, err := phpserial.Marshal(o)
		require.NoError(t, err)
		data, err := json.Marshal(CommandData{CommandName: o.Class, Command: string(cmd), BatchID: batchID})
		require.NoError(t, err)
		p, err := Payload{UUID: "u", DisplayName: o.Class, Job: CallQueuedHandler, Data: data}.Encode()
		require.NoError(t, err)
		return string(p)
	}
	link := func(class string) string {
		s, err := phpserial.Marshal(&phpserial.Object{Class: class, Props: []phpserial.Prop{{Name: "n", Value: int64(2)}}})
		require.NoError(t, err)
		return string(s)
	}
	list := func(vs ...any) *phpserial.Array {
		a := &phpserial.Array{Entries: []phpserial.Entry{}}
		for i, v := range vs {
			a.Entries = append(a.Entries, phpserial.Entry{Key: int64(i), Value: v})
		}
		return a
	}
	closure := &phpserial.Object{Class: `Laravel\SerializableClosure\SerializableClosure`, Props: []phpserial.Prop{{Name: "serializable", Value: "..."}}}
	for _, tc := range []struct {
		name, job, kind string
	}{
		{"mapped", job(""), ""},
		{"empty chain and catch", job("", phpserial.Prop{Name: "chained", Value: list()}, phpserial.Prop{Name: "chainCatchCallbacks", Value: list()}), ""},
		{"mapped chain", job("", phpserial.Prop{Name: "chained", Value: list(link(`App\Jobs\Mapped`))}), ""},
		{"catch, last link", job("", phpserial.Prop{Name: "chained", Value: list()}, phpserial.Prop{Name: "chainCatchCallbacks", Value: list(closure)}), kindCatch},
		{"catch, chain", job("", phpserial.Prop{Name: "chained", Value: list(link(`App\Jobs\Mapped`))}, phpserial.Prop{Name: "chainCatchCallbacks", Value: list(closure)}), kindCatch},
		{"unmapped link", job("", phpserial.Prop{Name: "chained", Value: list(link(`App\Jobs\Mapped`), link(`App\Jobs\PhpOnly`))}), kindChain},
		{"string-job link", job("", phpserial.Prop{Name: "chained", Value: list(link(`App\Jobs\Str@handle`))}), kindChain},
		{"chain on a connection", job("", phpserial.Prop{Name: "chained", Value: list(link(`App\Jobs\Mapped`))}, phpserial.Prop{Name: "chainConnection", Value: "sqs"}), kindChain},
		{"batchId property", job("", phpserial.Prop{Name: "batchId", Value: "9a1e"}), kindBatch},
		{"batchId property null", job("", phpserial.Prop{Name: "batchId"}), ""},
		{"batchId of another kind", job("", phpserial.Prop{Name: "batchId", Value: int64(42)}), ""},
		{"private batchId", job("", phpserial.Prop{Name: "batchId", Visibility: phpserial.Private, Declarer: `App\Jobs\Mapped`, Value: "x"}), ""},
		{"data.batchId (12.x)", job("9a1e"), kindBatch},
		{"unmapped class", `{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\PhpOnly","command":"O:1:..."},"attempts":0}`, kindUnmapped},
		{"string job", `{"job":"App\\Jobs\\Str@handle","data":{"s":"x"},"attempts":0}`, ""},
		{"no job", `[1,2,3]`, ""},
		{"no job", `{}`, ""},
		{"unmapped class, no attempts", `{"job":"App\\Jobs\\Other@handle","data":{}}`, ""},
	} {
		err := m.phpOnly([]byte(tc.job))
		if tc.kind == "" {
			require.NoError(t, err, tc.name)
			continue
		}
		var po *phpOnlyError
		require.True(t, errors.As(err, &po), "%s: %v", tc.name, err)
		require.Equal(t, tc.kind, po.kind, tc.name)
		require.ErrorIs(t, err, ErrUnmappable, tc.name)
	}
}

// TestNotAJob: what makes a payload no job, in words.
func TestNotAJob(t *testing.T) {
	t.Parallel()
	for payload, why := range map[string]string{
		`[1,2,3]`:                    "it is a JSON array, not an object",
		` "hello"`:                   "it is a JSON string, not an object",
		`42`:                         "it is a JSON number, not an object",
		`null`:                       "it is a JSON null, not an object",
		`{}`:                         `it has no "job" naming the class (or Class@method) to run`,
		`{"job":7,"attempts":0}`:     `it has no "job" naming the class (or Class@method) to run`,
		`{"job":"X@y"}`:              `its "attempts" is missing or not a number`,
		`{"job":"X@y","attempts":0}`: "",
		`{"job":`:                    "it is not JSON",
	} {
		require.Equal(t, why, notAJob([]byte(payload)), payload)
	}
}
