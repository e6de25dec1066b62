package load

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
	"github.com/jobgen/jobgen/internal/jobopt"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		comment string
		text    string
		kind    lineKind
	}{
		{"//job:", "", annotationLine},
		{"// job:", "", annotationLine}, // gofmt's form of the bare one
		{"// job:  ", "", annotationLine},
		{"//job:queue=emails tries=3", "queue=emails tries=3", annotationLine},
		{"//job:encrypted", "encrypted", annotationLine},
		{"//job: queue=emails", " queue=emails", spacedLine},
		{"// job: queue=emails", " queue=emails", spacedLine},
		{"// job: encrypted", " encrypted", spacedLine},
		{"// job: the thing to run", "", notAnnotation},
		{"// job: name of the job", "", notAnnotation},
		{"// A job: sends mail.", "", notAnnotation},
		{"//jobs:queue=x", "", notAnnotation},
		{"//go:generate go tool jobgen", "", notAnnotation},
		{"/*job:queue=x*/", "", notAnnotation},
	}
	for _, tt := range tests {
		t.Run(tt.comment, func(t *testing.T) {
			text, kind := classify(tt.comment)
			require.Equal(t, tt.kind, kind)
			if kind != notAnnotation {
				require.Equal(t, tt.text, text)
			}
		})
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  model.Options
		wname string
	}{
		{name: "bare", lines: []string{""}},
		{
			name:  "issue example",
			lines: []string{"queue=emails tries=5 backoff=10s,1m timeout=30s"},
			want: model.Options{Queue: "emails", Tries: 5, Backoff: []time.Duration{10 * time.Second, time.Minute},
				Timeout: 30 * time.Second},
		},
		{
			name: "every key over several lines",
			lines: []string{
				"name=billing.charge queue=billing connection=secondary tries=3",
				"backoff=0s,1500ms,1h30m timeout=2m retry_until=24h max_exceptions=2",
				"fail_on_timeout delay=90s unique_for=1h encrypted=true tags=billing,nightly",
			},
			wname: "billing.charge",
			want: model.Options{
				Queue: "billing", Connection: "secondary", Tries: 3,
				Backoff: []time.Duration{0, 1500 * time.Millisecond, 90 * time.Minute},
				Timeout: 2 * time.Minute, RetryUntil: 24 * time.Hour, MaxExceptions: 2, FailOnTimeout: true,
				Delay: 90 * time.Second, UniqueFor: time.Hour, Encrypted: true, Tags: []string{"billing", "nightly"},
			},
		},
		{name: "false bools", lines: []string{"encrypted=false fail_on_timeout=0"}},
		{name: "tabs and extra spaces", lines: []string{"queue=a\t  tries=2 "}, want: model.Options{Queue: "a", Tries: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a annotation
			for _, l := range tt.lines {
				require.Empty(t, a.parseLine(l))
			}
			require.Equal(t, tt.want, a.opts)
			require.Equal(t, tt.wname, a.name)
		})
	}
}

func TestParseLineErrors(t *testing.T) {
	validKeys := "valid keys: " + strings.Join(wantKeys(), ", ")
	tests := []struct {
		line string
		want []tokenError
	}{
		{"queu=emails", []tokenError{{0, `unknown key "queu" in //job: annotation; ` + validKeys}}},
		{"queue=a Queue=b", []tokenError{{8, `unknown key "Queue" in //job: annotation; ` + validKeys}}},
		{"queue=a queue=b", []tokenError{{8, "key queue is set twice"}}},
		{"tries", []tokenError{{0, "key tries needs a value (tries=...)"}}},
		{"tries=many", []tokenError{{0, "tries=many: want a whole number of at least 1"}}},
		{"tries=0", []tokenError{{0, "tries=0: want a whole number of at least 1"}}},
		{"max_exceptions=-1", []tokenError{{0, "max_exceptions=-1: want a whole number of at least 1"}}},
		{"timeout=30", []tokenError{{0, "timeout=30: want a positive Go duration such as 30s, 5m or 1h30m"}}},
		{"retry_until=0s", []tokenError{{0, "retry_until=0s: want a positive Go duration such as 30s, 5m or 1h30m"}}},
		{"delay=-1s", []tokenError{{0, "delay=-1s: want a positive Go duration such as 30s, 5m or 1h30m"}}},
		{"unique_for=soon", []tokenError{{0, "unique_for=soon: want a positive Go duration such as 30s, 5m or 1h30m"}}},
		{"backoff=10s,,1m", []tokenError{{0, `backoff=10s,,1m: item 2 (""): want a comma-separated list of Go durations such as 10s,1m,5m`}}},
		{"backoff=10s,-1s", []tokenError{{0, `backoff=10s,-1s: item 2 ("-1s"): want a comma-separated list of Go durations such as 10s,1m,5m`}}},
		{"encrypted=yes", []tokenError{{0, "encrypted=yes: want true or false"}}},
		{"tags=a,,b", []tokenError{{0, "tags=a,,b: item 2 is empty; want a comma-separated list such as mail,billing"}}},
		{"queue=", []tokenError{{0, "queue=: the queue name is empty"}}},
		{"queue={a}", []tokenError{{0, `queue={a}: queue name "{a}" contains "{", which would break its cluster hash tag`}}},
		{"queue=a}", []tokenError{{0, `queue=a}: queue name "a}" contains "}", which would break its cluster hash tag`}}},
		{"queue=emails#2", []tokenError{{0, `queue=emails#2: queue name "emails#2" contains "#", which is kept for the names of partitions (queue#1)`}}},
		{"connection=", []tokenError{{0, "connection=: the connection name is empty"}}},
		{"name=", []tokenError{{0, "name=: a job name is letters, digits and . _ - / : (at least one)"}}},
		{`name="a"`, []tokenError{{0, `name="a": a job name is letters, digits and . _ - / : (at least one)`}}},
		{"tries=x queue=ok bogus", []tokenError{
			{0, "tries=x: want a whole number of at least 1"},
			{17, `unknown key "bogus" in //job: annotation; ` + validKeys},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			var a annotation
			require.Equal(t, tt.want, a.parseLine(tt.line))
		})
	}
}

func TestParsePos(t *testing.T) {
	require.Equal(t, "/a/b.go:3:7", parsePos("/a/b.go:3:7").String())
	require.Equal(t, "/a/b.go:3", parsePos("/a/b.go:3").String())
	require.Equal(t, "C:/a/b.go:3:7", parsePos("C:/a/b.go:3:7").String())
	empty := parsePos("")
	require.False(t, empty.IsValid())
}

func TestLaravelKey(t *testing.T) {
	for _, ok := range []string{`App\Jobs\SendWelcomeEmail`, `\App\Jobs\X`, `SendMail`, `App\Jobs\ImportRow@handle`, `Ünïcode\Job`} {
		var a annotation
		require.Empty(t, a.parseLine("laravel="+ok), ok)
		require.Equal(t, ok, a.laravel)
	}
	for _, bad := range []string{``, `App\\Jobs`, `App\`, `1Job`, `App\Jobs\X@`, `App\Jobs-X`, `App\Jobs\X@1go`} {
		var a annotation
		errs := a.parseLine("laravel=" + bad)
		require.Len(t, errs, 1, bad)
		require.Contains(t, errs[0].msg, "want a PHP class")
	}
}

// wantKeys are the //job: keys an error lists: every job option's
// (jobopt.All) and the annotation's own, sorted.
func wantKeys() []string {
	out := []string{"debounce_key", "decode", "event", "group", "laravel", "listen", "name", "result", "sync", "upgrade", "version"}
	for _, o := range jobopt.All {
		out = append(out, o.Key)
	}
	slices.Sort(out)
	return out
}
