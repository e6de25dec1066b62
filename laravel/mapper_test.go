package laravel_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
)

// What PHP 8.2 and Laravel 8.83 serialize for testdata/php/jobs.php's
// SendWelcomeEmail(7, "a@b.c", ["x"]).
const sendWelcome = "O:25:\"App\\Jobs\\SendWelcomeEmail\":14:{s:5:\"tries\";i:3;s:6:\"userId\";i:7;s:8:\"\x00*\x00email\";s:5:\"a@b.c\";s:31:\"\x00App\\Jobs\\SendWelcomeEmail\x00tags\";a:1:{i:0;s:1:\"x\";}s:3:\"job\";N;s:10:\"connection\";N;s:5:\"queue\";N;s:15:\"chainConnection\";N;s:10:\"chainQueue\";N;s:19:\"chainCatchCallbacks\";N;s:5:\"delay\";N;s:11:\"afterCommit\";N;s:10:\"middleware\";a:0:{}s:7:\"chained\";a:0:{}}"

func TestDecodeCommand(t *testing.T) {
	t.Parallel()
	job, err := laravel.DecodeCommand[SendWelcomeEmail](sendWelcome, `App\Jobs\SendWelcomeEmail`)
	require.NoError(t, err)
	require.Equal(t, SendWelcomeEmail{UserID: 7, Email: "a@b.c", Tags: []string{"x"}}, job)

	// Encoding gives the same properties, visibility and all, in the
	// struct's order, then Queueable's.
	out, err := laravel.EncodeCommand(job, `App\Jobs\SendWelcomeEmail`, "emails", 5*time.Second)
	require.NoError(t, err)
	back, err := laravel.DecodeCommand[SendWelcomeEmail](string(out), `App\Jobs\SendWelcomeEmail`)
	require.NoError(t, err)
	require.Equal(t, job, back)
	require.Contains(t, string(out), "s:8:\"\x00*\x00email\";s:5:\"a@b.c\";")
	require.Contains(t, string(out), "s:31:\"\x00App\\Jobs\\SendWelcomeEmail\x00tags\";")
	require.Contains(t, string(out), `s:5:"queue";s:6:"emails";s:15:"chainConnection";N;s:10:"chainQueue";N;s:19:"chainCatchCallbacks";N;s:5:"delay";i:5;`)
}

func TestDecodeCommandRefuses(t *testing.T) {
	t.Parallel()
	const class = `App\Jobs\SendWelcomeEmail`
	for name, cmd := range map[string]string{
		"another class":     `O:8:"stdClass":0:{}`,
		"not an object":     `a:0:{}`,
		"closure":           "O:25:\"App\\Jobs\\SendWelcomeEmail\":1:{s:6:\"userId\";O:47:\"Laravel\\SerializableClosure\\SerializableClosure\":0:{}}",
		"eloquent model":    "O:25:\"App\\Jobs\\SendWelcomeEmail\":1:{s:6:\"userId\";O:45:\"Illuminate\\Contracts\\Database\\ModelIdentifier\":2:{s:5:\"class\";s:8:\"App\\User\";s:2:\"id\";i:1;}}",
		"wrong type":        "O:25:\"App\\Jobs\\SendWelcomeEmail\":1:{s:6:\"userId\";s:3:\"abc\";}",
		"custom serialized": "O:25:\"App\\Jobs\\SendWelcomeEmail\":1:{s:6:\"userId\";C:3:\"Foo\":0:{}}",
	} {
		_, err := laravel.DecodeCommand[SendWelcomeEmail](cmd, class)
		require.ErrorIs(t, err, laravel.ErrUnmappable, name)
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	// As Laravel's own pop script (cjson) re-encodes a reserved copy,
	// which reaches a Go worker when a PHP worker's reservation expires:
	// keys reordered, {} for [], large numbers as floats.
	p, err := laravel.DecodePayload([]byte(`{"attempts":2,"backoff":"1,5,10","data":{},"displayName":"X","failOnTimeout":true,"id":"abc","job":"X@handle","maxExceptions":2,"maxTries":3,"retryUntil":1.7645e+09,"timeout":30,"uuid":"u"}`))
	require.NoError(t, err)
	require.EqualValues(t, 2, p.Attempts)
	require.EqualValues(t, 1764500000, *p.RetryUntil)
	require.Equal(t, []time.Duration{time.Second, 5 * time.Second, 10 * time.Second}, p.BackoffDelays())
	require.True(t, p.FailOnTimeout)
	out, err := p.Encode()
	require.NoError(t, err)
	require.Equal(t, `{"uuid":"u","displayName":"X","job":"X@handle","maxTries":3,"maxExceptions":2,"failOnTimeout":true,"backoff":"1,5,10","timeout":30,"retryUntil":1764500000,"data":{},"id":"abc","attempts":2}`, string(out))

	for _, bad := range []string{`[]`, `{"job":""}`, `{"job":"X","attempts":"2"}`, `{"job":"X","retryUntil":1.5}`} {
		_, err := laravel.DecodePayload([]byte(bad))
		require.Error(t, err, bad)
	}
}

type importRow struct {
	File string `json:"file"`
	Row  int    `json:"row"`
}

func TestMapperRefuses(t *testing.T) {
	t.Parallel()
	m := laravel.NewMapper()
	laravel.Map[SendWelcomeEmail](m, `App\Jobs\SendWelcomeEmail`, "a")
	laravel.Map[SendWelcomeEmail](m, `App\Jobs\Other`, "b")
	laravel.Map[ResizeAvatar](m, `App\Jobs\SendWelcomeEmail`, "c")
	laravel.Map[int](m, `App\Jobs\Int`, "d")
	laravel.MapString[importRow](m, `App\Jobs\ImportRow`, "")
	err := m.Err()
	require.ErrorContains(t, err, "Go type laravel_test.SendWelcomeEmail mapped twice")
	require.ErrorContains(t, err, `PHP job App\Jobs\SendWelcomeEmail mapped twice`)
	require.ErrorContains(t, err, "int is not a struct")
	require.ErrorContains(t, err, "empty PHP class or job name")
}

// anyJob's objects carry any one of its properties.
type anyJob struct {
	Data any        `php:"data,optional"`
	Next *anyJob    `php:"next,optional"`
	Nest [][]anyJob `php:"nest,optional"`
}

// A back-reference can make a value contain itself; decoding it ends
// with an error.
func TestDecodeCommandSelfReference(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{
		"O:1:\"A\":1:{s:4:\"data\";a:1:{i:0;R:2;}}",
		"O:1:\"A\":1:{s:4:\"next\";r:1;}",
		"O:1:\"A\":1:{s:4:\"nest\";a:1:{i:0;R:2;}}",
	} {
		_, err := laravel.DecodeCommand[anyJob](cmd, "A")
		require.ErrorIs(t, err, laravel.ErrUnmappable, cmd)
	}
}

func TestEncodeCommandCycle(t *testing.T) {
	t.Parallel()
	j := &anyJob{}
	j.Next = j
	_, err := laravel.EncodeCommand(j, "A", "default", 0)
	require.ErrorIs(t, err, laravel.ErrUnmappable)
}

// manyReferences is a SendWelcomeEmail whose tags are n strings, then n
// references (R:) to the last of them.
func manyReferences(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "O:25:\"App\\Jobs\\SendWelcomeEmail\":1:{s:4:\"tags\";a:%d:{", 2*n)
	for i := range n {
		fmt.Fprintf(&b, "i:%d;s:1:\"x\";", i)
	}
	for i := n; i < 2*n; i++ {
		fmt.Fprintf(&b, "i:%d;R:%d;", i, n+2)
	}
	b.WriteString("}}")
	return b.String()
}

// References are resolved through an index of the values built once: a
// walk of the tree for each reference made this (600 kB) take seconds.
func TestDecodeCommandManyReferences(t *testing.T) {
	t.Parallel()
	const n = 20_000
	type tagsOnly struct {
		Tags []string `php:"tags"`
	}
	job, err := laravel.DecodeCommand[tagsOnly](manyReferences(n), `App\Jobs\SendWelcomeEmail`)
	require.NoError(t, err)
	require.Len(t, job.Tags, 2*n)
	require.Equal(t, "x", job.Tags[2*n-1])
}

// referenceBomb is an object A whose data is an array of a string and
// levels arrays, each of two references (R:) to the one before it: a few
// hundred bytes that stand for 2^levels copies of the string.
func referenceBomb(levels int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "O:1:\"A\":1:{s:4:\"data\";a:%d:{i:0;s:1:\"x\";", levels+1)
	for i := 1; i <= levels; i++ {
		// Value 3 is the string; each array takes the next number.
		fmt.Fprintf(&b, "i:%d;a:2:{i:0;R:%d;i:1;R:%d;}", i, i+2, i+2)
	}
	b.WriteString("}}")
	return b.String()
}

// Go copies what PHP shares, so the references of a reference bomb
// would make billions of values; the conversion stops past a bound, with
// an error that says so. Without the bound, 22 levels took 3 s and each
// more doubled it.
func TestDecodeCommandReferenceBomb(t *testing.T) {
	t.Parallel()
	_, err := laravel.DecodeCommand[anyJob](referenceBomb(10), "A")
	require.NoError(t, err, "a thousand copies are fine")
	_, err = laravel.DecodeCommand[anyJob](referenceBomb(60), "A")
	require.ErrorIs(t, err, laravel.ErrUnmappable)
	require.ErrorContains(t, err, "$data: references repeat more than 262144 values")
}
