// Package mail is a golden case: a job at version 2 of its schema with
// an upgrade from version 1, a job with a field added since jobs were
// queued, and a job decoded leniently.
package mail

// SendEmail sends one email.
//
//job:queue=emails version=2 upgrade=SendEmailV1
type SendEmail struct {
	Recipient string
	Subject   string
}

// SendEmailV1 is SendEmail as version 1 carried it.
type SendEmailV1 struct {
	To      string
	Subject string
}

// Upgrade turns a version 1 job into a version 2 one.
func (old SendEmailV1) Upgrade() SendEmail {
	return SendEmail{Recipient: old.To, Subject: old.Subject}
}

// Digest mails a digest.
//
//job:queue=emails
type Digest struct {
	UserID int64
	// Weekly was added while Digest jobs were queued: their bodies lack
	// it, and it decodes as false.
	Weekly bool
}

// Import reads a feed whose producer may add keys.
//
//job:decode=lenient
type Import struct {
	URL string
}
