package load

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionKeyErrors: the version=, upgrade= and decode= keys are
// checked where the annotation is, each problem naming what to do.
func TestVersionKeyErrors(t *testing.T) {
	t.Parallel()
	const v1 = "type SendEmailV1 struct{ To string }\n"
	tests := []struct {
		name string
		src  string // the body of jobs.go after "package mail\n\n"
		want []string
	}{
		{
			name: "upgrade without version",
			src:  "//job:upgrade=SendEmailV1\ntype SendEmail struct{ Recipient string }\n\n" + v1,
			want: []string{`jobs.go:4:6: SendEmail has upgrade=SendEmailV1 but no version= above 1; an upgrade leads from the previous version to this one: add version=N, N being one more than the version in jobgen.lock`},
		},
		{
			name: "no such upgrade type",
			src:  "//job:version=2 upgrade=SendEmailV1\ntype SendEmail struct{ Recipient string }\n",
			want: []string{`jobs.go:4:6: SendEmail has upgrade=SendEmailV1, but package mail declares no type SendEmailV1; declare it as a struct with version 1's fields (their wire keys and types as jobgen.lock records them)`},
		},
		{
			name: "no Upgrade method",
			src:  "//job:version=2 upgrade=SendEmailV1\ntype SendEmail struct{ Recipient string }\n\n" + v1,
			want: []string{`jobs.go:6:6: upgrade=SendEmailV1 of SendEmail: SendEmailV1 has no method Upgrade; add func (old SendEmailV1) Upgrade() SendEmail, which turns a version 1 job into a version 2 one`},
		},
		{
			name: "Upgrade of another signature",
			src:  "//job:version=2 upgrade=SendEmailV1\ntype SendEmail struct{ Recipient string }\n\n" + v1 + "\nfunc (old SendEmailV1) Upgrade() string { return old.To }\n",
			want: []string{`jobs.go:8:24: SendEmailV1.Upgrade is not Upgrade() SendEmail; give it that signature (value receiver) to upgrade version 1 jobs of SendEmail`},
		},
		{
			name: "version with laravel",
			src:  "//job:version=2 laravel=App\\Jobs\\SendEmail\ntype SendEmail struct{ Recipient string }\n",
			want: []string{`jobs.go:4:6: SendEmail has laravel=App\Jobs\SendEmail and version=2: a Laravel job's shape is its PHP class's, which the bridge maps as the struct is now, so it has no versions; drop version= and upgrade=, and keep the Go fields' php tags on the property names queued jobs carry (docs/changing-jobs.md)`},
		},
		{
			name: "bad decode",
			src:  "//job:decode=loose\ntype SendEmail struct{ To string }\n",
			want: []string{`jobs.go:3:7: decode=loose: want strict (the default: a body with a key the struct does not know, or without a field, fails the job) or lenient (skip such keys, leave such fields zero)`},
		},
		{
			name: "version on a listener",
			src:  "//job:event\ntype Shipped struct{ ID string }\n\n//job:listen=Shipped version=2\ntype Notify struct{}\n",
			want: []string{`jobs.go:7:6: listener Notify may not set version: a listener's job carries its event, whose schema the lock covers as the event's; events have no versions`},
		},
		{
			name: "version zero",
			src:  "//job:version=0\ntype SendEmail struct{ To string }\n",
			want: []string{`jobs.go:3:7: version=0: want a whole number of at least 1`},
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
