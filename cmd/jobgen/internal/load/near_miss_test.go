package load

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
)

func TestNearMiss(t *testing.T) {
	tests := []struct {
		comment string
		fix     string // "" for a comment that is left alone
	}{
		{"//jobs:queue=emails", "//job:queue=emails"},
		{"//jobs:", "//job:"},
		{"//Job:queue=emails tries=3", "//job:queue=emails tries=3"},
		{"//JOB:", "//job:"},
		{"// Job: queue=emails", "//job:queue=emails"},
		{"// jobs: encrypted", "//job:encrypted"},
		{"// job:queue=emails", "//job:queue=emails"},
		{"// job: queu=emails", "//job:queu=emails"},
		{"//  job:  queue=emails", "//job:queue=emails"},
		{"//job queue=emails", "//job:queue=emails"},
		{"//\tjob: tries=3", "//job:tries=3"},
		// Prose and other comments stay comments.
		{"// Jobs: the ones below run nightly.", ""},
		{"// Job: sends mail.", ""},
		{"// jobs:", ""},
		{"// job runs once", ""},
		{"// job: the thing to run", ""},
		{"// jobless workers idle", ""},
		{"//jobless", ""},
		{"// A job: queue=x is how it is written.", ""},
		{"//go:generate go tool jobgen", ""},
		{"/*jobs:queue=x*/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.comment, func(t *testing.T) {
			fix, ok := nearMiss(tt.comment)
			require.Equal(t, tt.fix != "", ok)
			require.Equal(t, tt.fix, fix)
		})
	}
}

// TestLoadNearMisses: a mistyped annotation, or keys joined with
// commas, is an error at its line that shows the line as it should be;
// none is ignored.
func TestLoadNearMisses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string // the body of jobs.go after "package mail\n\n"
		want []string
	}{
		{
			name: "plural",
			src:  "//jobs:queue=emails\ntype T struct{ A int }\n",
			want: []string{`jobs.go:3:1: "//jobs:queue=emails" is not a //job: annotation, so jobgen would ignore it; write it as //job:queue=emails ("job" in lower case, then a colon, with no space after // or after the colon)`},
		},
		{
			name: "capital",
			src:  "// T is a job.\n//\n//Job:tries=3\ntype T struct{ A int }\n",
			want: []string{`jobs.go:5:1: "//Job:tries=3" is not a //job: annotation, so jobgen would ignore it; write it as //job:tries=3 ("job" in lower case, then a colon, with no space after // or after the colon)`},
		},
		{
			name: "space after the slashes",
			src:  "// job:queue=emails\ntype T struct{ A int }\n",
			want: []string{`jobs.go:3:1: "// job:queue=emails" is not a //job: annotation, so jobgen would ignore it; write it as //job:queue=emails ("job" in lower case, then a colon, with no space after // or after the colon)`},
		},
		{
			name: "gofmt's form with a misspelt key",
			src:  "// job: queu=emails\ntype T struct{ A int }\n",
			want: []string{`jobs.go:3:1: "// job: queu=emails" is not a //job: annotation, so jobgen would ignore it; write it as //job:queu=emails ("job" in lower case, then a colon, with no space after // or after the colon)`},
		},
		{
			name: "no colon",
			src:  "//job queue=emails\ntype T struct{ A int }\n",
			want: []string{`jobs.go:3:1: "//job queue=emails" is not a //job: annotation, so jobgen would ignore it; write it as //job:queue=emails ("job" in lower case, then a colon, with no space after // or after the colon)`},
		},
		{
			name: "away from any type",
			src:  "//jobs:\n\nvar x = 1\n",
			want: []string{`jobs.go:3:1: "//jobs:" is not a //job: annotation, so jobgen would ignore it; write it as //job: ("job" in lower case, then a colon, with no space after // or after the colon)`},
		},
		{
			name: "keys joined with commas",
			src:  "//job:queue=billing,tries=3\ntype T struct{ A int }\n",
			want: []string{"jobs.go:3:7: queue=billing,tries=3: keys are separated by spaces, not commas: write queue=billing tries=3"},
		},
		{
			name: "a bare key joined with a comma",
			src:  "//job:queue=billing,encrypted\ntype T struct{ A int }\n",
			want: []string{"jobs.go:3:7: queue=billing,encrypted: keys are separated by spaces, not commas: write queue=billing encrypted"},
		},
		{
			name: "keys joined with commas after other options",
			src:  "//job:connection=secondary,tries=3 backoff=10s,timeout=30s tags=mail,queue=x\ntype T struct{ A int }\n",
			want: []string{
				"jobs.go:3:7: connection=secondary,tries=3: keys are separated by spaces, not commas: write connection=secondary tries=3",
				"jobs.go:3:36: backoff=10s,timeout=30s: keys are separated by spaces, not commas: write backoff=10s timeout=30s",
				"jobs.go:3:60: tags=mail,queue=x: keys are separated by spaces, not commas: write tags=mail queue=x",
			},
		},
		{
			name: "a comma in a queue name",
			src:  "//job:queue=high,low\ntype T struct{ A int }\n",
			want: []string{`jobs.go:3:7: queue=high,low: queue name "high,low" contains ",", which separates the queues of a list (queue:work --queue high,low), so no worker could be told to serve it`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadSource(t, "package mail\n\n"+tt.src)
			require.Error(t, err)
			require.Equal(t, tt.want, problems(t, err))
		})
	}
}

// TestLoadNearMissProse: comments that only look like annotations at a
// glance load without a problem, and gofmt's "// job:" is a bare
// annotation.
func TestLoadNearMissProse(t *testing.T) {
	t.Parallel()
	p, err := loadSource(t, `package mail

// Jobs: the ones below run nightly.

// T is a job: it runs.
//
// job:
type T struct{ A int }

// U is no job.
//
// Job: none, it is a value.
type U struct{ B int }
`)
	require.NoError(t, err)
	require.Len(t, p.Jobs, 1)
}

// TestCommaJoinedKeys: a list of words may hold a word that is also a
// bare key (a tag named encrypted); a word value may not.
func TestCommaJoinedKeys(t *testing.T) {
	tags, _ := jobopt.ByKey("tags")
	queue, _ := jobopt.ByKey("queue")
	require.NoError(t, commaJoinedKeys(tags, "mail,encrypted"))
	require.NoError(t, commaJoinedKeys(tags, "a=b,c"))
	require.EqualError(t, commaJoinedKeys(queue, "billing,encrypted"), "keys are separated by spaces, not commas: write queue=billing encrypted")
	require.NoError(t, commaJoinedKeys(queue, "high,low"), "qname reports the comma")
}
