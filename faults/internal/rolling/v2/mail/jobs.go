// Package mail is version 2 of the job of the rolling deploy fault test
// (faults.TestRollingDeploy): version 1's field To (../../v1/mail) is
// renamed Recipient, with its wire key, and version 1 jobs are upgraded.
package mail

//go:generate go run github.com/jobgen/jobgen/cmd/jobgen

// SendEmail is the job, as version 2 of the service has it.
//
//job:name=rolling.SendEmail queue=rolling version=2 upgrade=SendEmailV1
type SendEmail struct {
	// Seq numbers the job among those the test dispatched.
	Seq int64
	// Recipient is version 1's To.
	Recipient string
}

// SendEmailV1 is SendEmail as version 1 carried it.
type SendEmailV1 struct {
	Seq int64
	To  string
}

// Upgrade turns a version 1 job into a version 2 one.
func (old SendEmailV1) Upgrade() SendEmail {
	return SendEmail{Seq: old.Seq, Recipient: old.To}
}
