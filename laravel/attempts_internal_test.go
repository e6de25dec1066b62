package laravel

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBumpAttempts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"data":[],"maxTries":null,"attempts":0}`, `{"data":[],"maxTries":null,"attempts":1}`},
		// Spacing, escapes and key order are PHP's or whoever's; they stay.
		{` { "attempts" : 7 , "job":"A\/B\u00e9" } `, ` { "attempts" : 8 , "job":"A\/B\u00e9" } `},
		// Only the top-level key counts, and of several the last, as
		// json_decode keeps it.
		{`{"data":{"attempts":5},"attempts":1}`, `{"data":{"attempts":5},"attempts":2}`},
		{`{"attempts":1,"x":[{"attempts":9}],"attempts":4}`, `{"attempts":1,"x":[{"attempts":9}],"attempts":5}`},
		{`{"attempt\u0073":2}`, `{"attempt\u0073":3}`},
		// Numbers in other forms, as cjson or other producers write them.
		{`{"attempts":1.0e+2}`, `{"attempts":101}`},
		{`{"attempts":1.5}`, `{"attempts":2.5}`},
		{`{"attempts":-1}`, `{"attempts":0}`},
		{`{"attempts":-0}`, `{"attempts":1}`},
		{`{"attempts":9007199254740993}`, `{"attempts":9007199254740994}`},
		{`{"attempts":9223372036854775806}`, `{"attempts":9223372036854775807}`},
	} {
		got, ok := bumpAttempts([]byte(tc.in))
		require.True(t, ok, tc.in)
		require.Equal(t, tc.want, string(got), tc.in)
	}
	for _, in := range []string{
		``, `not json`, `["attempts",1]`, `{"data":{"attempts":1}}`, `{"attempts":"1"}`,
		`{"attempts":null}`, `{"attempts":true}`, `{"attempts":[1]}`, `{"attempts":1} {}`,
		`{"attempts":1`, `{"attempts":1e400}`, `{"attempts":1e300}`,
		`{"attempts":9223372036854775807}`,
	} {
		got, ok := bumpAttempts([]byte(in))
		require.False(t, ok, in)
		require.Equal(t, in, string(got), "kept as it was")
	}
}

// Whatever the payload, bumpAttempts changes the value of attempts and
// nothing else: every other top-level value keeps its bytes.
func FuzzBumpAttempts(f *testing.F) {
	for _, s := range []string{
		`{"uuid":"u","job":"X@handle","data":[],"maxTries":null,"attempts":0}`,
		`{"attempts":1.5e3,"attempts":2," attempts":3,"data":{"attempts":1}}`,
		` {"attempt\u0073" : -0 } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		out, ok := bumpAttempts(in)
		require.Equal(t, orig, in, "input changed")
		if !ok {
			require.Equal(t, in, out)
			return
		}
		var before, after map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(in, &before))
		require.NoError(t, json.Unmarshal(out, &after), "%q", out)
		require.Len(t, after, len(before))
		for k, v := range before {
			if k != "attempts" {
				require.Equal(t, string(v), string(after[k]), k)
			}
		}
		if was, err := strconv.ParseInt(string(before["attempts"]), 10, 64); err == nil {
			now, err := strconv.ParseInt(string(after["attempts"]), 10, 64)
			require.NoError(t, err)
			require.Equal(t, was+1, now)
			return
		}
		was, err := strconv.ParseFloat(string(before["attempts"]), 64)
		require.NoError(t, err)
		now, err := strconv.ParseFloat(string(after["attempts"]), 64)
		require.NoError(t, err)
		require.Equal(t, was+1, now, "%s -> %s", before["attempts"], after["attempts"])
	})
}
