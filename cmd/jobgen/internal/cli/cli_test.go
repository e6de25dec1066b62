package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/load"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// testBundle is a module in a temporary directory and a way to run
// jobgen in it.
type testBundle struct {
	dir string
}

func setup(t *testing.T, files map[string]string) testBundle {
	t.Helper()
	b := testBundle{dir: t.TempDir()}
	b.write(t, "go.mod", "module example.com/app\n\ngo 1.26\n")
	for name, src := range files {
		b.write(t, name, src)
	}
	return b
}

func (b testBundle) write(t *testing.T, name, src string) {
	t.Helper()
	path := filepath.Join(b.dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
}

func (b testBundle) read(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(b.dir, name))
	require.NoError(t, err)
	return string(src)
}

func (b testBundle) exists(name string) bool {
	_, err := os.Stat(filepath.Join(b.dir, name))
	return err == nil
}

// run runs jobgen in dir (relative to the module) and returns its exit
// code, stdout and stderr.
func (b testBundle) run(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := &Command{Dir: filepath.Join(b.dir, dir), Stdout: &stdout, Stderr: &stderr}
	code := c.Run(args)
	return code, stdout.String(), stderr.String()
}

const mailJobs = "package mail\n\n//job:queue=emails\ntype SendEmail struct{ To string }\n"

func TestGenerate(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"mail/jobs.go": mailJobs})

	code, _, stderr := b.run(t, "mail")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	out := b.read(t, "mail/"+model.OutputFile)
	require.True(t, strings.HasPrefix(out, "// "+model.Header+"\n"))
	require.Contains(t, out, `Queue: "emails"`)

	code, _, stderr = b.run(t, "mail", "-check")
	require.Equal(t, 0, code, stderr)

	b.write(t, "mail/jobs.go", strings.Replace(mailJobs, "emails", "mail", 1))
	code, _, stderr = b.run(t, "mail", "-check")
	require.Equal(t, 1, code)
	require.Equal(t, "jobs_gen.go is stale: run jobgen (go generate)\n", stderr)
	require.Equal(t, out, b.read(t, "mail/"+model.OutputFile), "-check wrote")

	code, _, stderr = b.run(t, "mail")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, b.read(t, "mail/"+model.OutputFile), `Queue: "mail"`)

	// With no job left, the schema lock refuses, as jobs may be queued;
	// accepted, the output and the lock go.
	b.write(t, "mail/jobs.go", "package mail\n\ntype SendEmail struct{ To string }\n")
	code, _, stderr = b.run(t, "mail")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "job SendEmail (wire name \"mail.SendEmail\") is in jobgen.lock but no longer in package example.com/app/mail")
	require.True(t, b.exists("mail/"+model.OutputFile))
	code, _, stderr = b.run(t, "mail", "-accept-break=SendEmail")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "jobgen: removed jobgen.lock: package example.com/app/mail has no //job: types left\njobgen: removed jobs_gen.go: package example.com/app/mail has no //job: types left\n", stderr)
	require.False(t, b.exists("mail/"+model.OutputFile))
	require.False(t, b.exists("mail/"+model.LockFile))

	code, _, stderr = b.run(t, "mail")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "jobgen: package example.com/app/mail has no //job: types; nothing to generate\n", stderr)
}

func TestGeneratePatterns(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{
		"mail/jobs.go":    mailJobs,
		"billing/jobs.go": "package billing\n\n//job:\ntype Charge struct{ Cents int }\n",
		"plain/plain.go":  "package plain\n",
	})
	code, _, stderr := b.run(t, "", "./...")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr, "packages without jobs are skipped quietly")
	require.True(t, b.exists("mail/"+model.OutputFile))
	require.True(t, b.exists("billing/"+model.OutputFile))
	require.False(t, b.exists("plain/"+model.OutputFile))

	code, _, stderr = b.run(t, "", "-check", "./mail", "example.com/app/billing")
	require.Equal(t, 0, code, stderr)
}

func TestGenerateErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{
		"mail/jobs.go": "package mail\n\n//job:tries=many\ntype SendEmail struct{ To string }\n\n//job:\ntype Bad int\n",
	})
	code, _, stderr := b.run(t, "mail")
	require.Equal(t, 1, code)
	require.Equal(t, "jobs.go:3:7: tries=many: want a whole number of at least 1\n"+
		"jobs.go:7:6: Bad is not a struct (its type is int); //job: belongs on a struct type\n"+
		"jobgen: 2 problems; nothing written\n", stderr)
	require.False(t, b.exists("mail/"+model.OutputFile))

	// From the module root, paths are relative to it.
	code, _, stderr = b.run(t, "", "./...")
	require.Equal(t, 1, code)
	require.True(t, strings.HasPrefix(stderr, filepath.Join("mail", "jobs.go")+":3:7: tries=many"), stderr)
}

func TestGenerateNoMatch(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	code, _, stderr := b.run(t, "", "./nothing")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "nothing")
}

func TestGenerateKeepsForeignFile(t *testing.T) {
	t.Parallel()
	foreign := "package mail\n\n// Mine.\nvar Mine = 1\n"
	b := setup(t, map[string]string{"mail/jobs.go": mailJobs, "mail/" + model.OutputFile: foreign})
	code, _, stderr := b.run(t, "mail")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "jobs_gen.go exists and was not written by jobgen")
	require.Equal(t, foreign, b.read(t, "mail/"+model.OutputFile))
}

func TestUsage(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	code, stdout, _ := b.run(t, "", "help")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "jobgen make:job Name")
	code, _, stderr := b.run(t, "", "-bogus")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "flag provided but not defined: -bogus")
}

func TestMakeJob(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)

	code, stdout, stderr := b.run(t, "", "make:job", "SendEmail", "--queue", "emails", "--dir", "internal/mail")
	require.Equal(t, 0, code, stderr)
	path := filepath.Join("internal", "mail", "send_email.go")
	require.Equal(t, "created "+path+"; run go generate to generate its methods\n", stdout)
	src := b.read(t, path)
	require.Contains(t, src, "package mail\n\n//go:generate go tool jobgen\n")
	require.Contains(t, src, "//job:queue=emails tries=3\ntype SendEmail struct {")
	require.Contains(t, src, "func (j SendEmail) Handle(ctx context.Context) error {")

	// Flags may come first; the package has its go:generate line already.
	code, _, stderr = b.run(t, "internal/mail", "make:job", "-queue=emails", "HTTPCallback")
	require.Equal(t, 0, code, stderr)
	src = b.read(t, "internal/mail/http_callback.go")
	require.NotContains(t, src, "go:generate")
	require.Contains(t, src, "package mail\n")

	// Without --queue, the job goes to runtime's default queue.
	code, _, stderr = b.run(t, "internal/mail", "make:job", "Ping")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, b.read(t, "internal/mail/ping.go"), "//job:tries=3\n")

	// The starter files are jobs jobgen accepts.
	pkgs, err := load.Load(load.Config{Dir: filepath.Join(b.dir, "internal/mail")})
	require.NoError(t, err)
	require.Len(t, pkgs, 1)
	require.Equal(t, []model.Job{
		{TypeName: "HTTPCallback", Name: "mail.HTTPCallback", HandleMethod: true, Options: model.Options{Queue: "emails", Tries: 3}},
		{TypeName: "Ping", Name: "mail.Ping", HandleMethod: true, Options: model.Options{Tries: 3}},
		{TypeName: "SendEmail", Name: "mail.SendEmail", HandleMethod: true, Options: model.Options{Queue: "emails", Tries: 3}},
	}, pkgs[0].Jobs)
}

func TestMakeJobErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"mail/existing.go": "package mail\n\ntype Taken struct{}\n"})
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"make:job"}, 2, "jobgen make:job: want one job name, got 0"},
		{[]string{"make:job", "A", "B"}, 2, "jobgen make:job: want one job name, got 2"},
		{[]string{"make:job", "sendEmail"}, 1, `job name "sendEmail" must be an exported Go identifier, such as SendEmail`},
		{[]string{"make:job", "Send-Email"}, 1, `job name "Send-Email" must be an exported Go identifier`},
		{[]string{"make:job", "Register"}, 1, `job name "Register" is declared by the generated jobs_gen.go; pick another`},
		{[]string{"make:job", "Taken", "--dir", "mail"}, 1, "existing.go:3:6: Taken is declared already"},
		{[]string{"make:job", "Existing", "--dir", "mail"}, 1, "existing.go exists already; not overwriting it"},
		{[]string{"make:job", "A", "--queue", "a b"}, 1, `queue "a b" must not contain spaces`},
		{[]string{"make:job", "A", "--queue", "a{b}"}, 1, `queue name "a{b}" contains "{", which would break its cluster hash tag`},
		{[]string{"make:job", "A", "--queue", "a#b"}, 1, `queue name "a#b" contains "#", which is kept for the names of partitions (queue#1)`},
	}
	for _, tt := range tests {
		code, _, stderr := b.run(t, "", tt.args...)
		require.Equal(t, tt.code, code, "%v: %s", tt.args, stderr)
		require.Contains(t, stderr, tt.want, "%v", tt.args)
	}
	require.Equal(t, "package mail\n\ntype Taken struct{}\n", b.read(t, "mail/existing.go"))
}
