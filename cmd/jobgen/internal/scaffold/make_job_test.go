package scaffold

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/jobopt"
)

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"SendEmail":     "send_email",
		"HTTPCallback":  "http_callback",
		"ResizeJPEG":    "resize_jpeg",
		"Ping":          "ping",
		"Job2Run":       "job2_run",
		"A":             "a",
		"SendEmailV2":   "send_email_v2",
		"ÜberAufgabe":   "über_aufgabe",
		"APIKeyRefresh": "api_key_refresh",
	} {
		require.Equal(t, want, snakeCase(in), in)
	}
}

func TestPackageName(t *testing.T) {
	for in, want := range map[string]string{
		"mail":       "mail",
		"Mail-Jobs":  "mailjobs",
		"v2":         "v2",
		"2fa":        "fa",
		"---":        "jobs",
		"jobs_queue": "jobsqueue",
	} {
		require.Equal(t, want, packageName(in), in)
	}
}

func TestRender(t *testing.T) {
	src, err := render(jobData{Package: "mail", Name: "SendEmail", Queue: "emails", Generate: true})
	require.NoError(t, err)
	// The go:generate line is spliced in so that it does not start a line
	// of this file: go generate would run it.
	require.Equal(t, `package mail

`+"//go:"+`generate go tool jobgen

import "context"

// SendEmail is a queued job. Its exported fields are what it carries to the
// worker: they are encoded with msgpack when it is dispatched, so keep them
// to data (strings, numbers, slices, maps and structs of those).
//
// The //job: line below sets its defaults; run go generate after editing
// it. Keys: name, queue, connection, tries, backoff, timeout, retry_until,
// max_exceptions, fail_on_timeout, delay, unique_for, debounce,
// debounce_key, debounce_max_wait, group, group_limit, encrypted, tags,
// result, needs, laravel, version, upgrade, decode.
//
//job:queue=emails tries=3
type SendEmail struct {
	// ID is an example field; replace it with what the job needs.
	ID string
}

// Handle runs the job. An error fails this attempt; the job is tried again
// after its backoff until it runs out of tries.
func (j SendEmail) Handle(ctx context.Context) error {
	// Do the work here.
	return nil
}
`, string(src))
}

// TestTemplateNamesEveryKey: the starter job's comment lists every
// //job: key of a job in the table of keys, which the generator's tests
// hold to the keys it reads (among them group and result, which are no
// options), and cmd/jobgen's doc describes each.
func TestTemplateNamesEveryKey(t *testing.T) {
	src, err := render(jobData{Package: "mail", Name: "SendEmail"})
	require.NoError(t, err)
	doc, err := os.ReadFile("../../doc.go")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(src), "//", "")), " ")
	_, listed, ok := strings.Cut(text, "Keys: ")
	require.True(t, ok, "the starter job lists no keys:\n%s", src)
	listed, _, _ = strings.Cut(listed, ".")
	require.Equal(t, jobopt.JobKeys(), strings.Split(listed, ", "), "the starter job's list of keys")
	for _, k := range jobopt.Keys {
		if !k.Job {
			continue
		}
		require.Contains(t, strings.Split(listed, ", "), k.Key, "the starter job lists %s", k.Key)
		require.Regexp(t, `(?m)^//\t`+k.Key+`\b`, string(doc), "cmd/jobgen/doc.go describes %s", k.Key)
	}
}

func TestComment(t *testing.T) {
	require.Equal(t, "// a b", comment("a  b"))
	require.Equal(t, "// "+strings.Repeat("x", 80)+"\n// y", comment(strings.Repeat("x", 80)+" y"))
	require.Equal(t, "// "+strings.Repeat("x", 72)+"\n// y", comment(strings.Repeat("x", 72)+" y"))
	require.Equal(t, "// "+strings.Repeat("x", 71)+" y", comment(strings.Repeat("x", 71)+" y"))
}
