// Package mail is version 1 of the job of the rolling deploy fault test
// (faults.TestRollingDeploy): its field To is renamed Recipient in
// version 2 (../../v2/mail), which upgrades it.
package mail

//go:generate go run github.com/jobgen/jobgen/cmd/jobgen

// SendEmail is the job, as version 1 of the service has it.
//
//job:name=rolling.SendEmail queue=rolling
type SendEmail struct {
	// Seq numbers the job among those the test dispatched.
	Seq int64
	// To is the field version 2 renames.
	To string
}
