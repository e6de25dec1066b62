// Package mail is a schema lock case.
package mail

// SendEmail sends one email.
//
//job:queue=emails version=2 upgrade=SendEmailV1
type SendEmail struct {
	Recipient string
	Subject   string
	Count     int32
}

// Receipt is what Quote returns.
type Receipt struct {
	Cents int64
}

// Quote prices a parcel.
//
//job:result=Receipt
type Quote struct {
	Grams int64
}

// OrderShipped is an event.
//
//job:event
type OrderShipped struct {
	OrderID string
}

// SendEmailV1 is SendEmail as version 1 carried it.
type SendEmailV1 struct {
	To      int
	Subject string
	Count   int32
}

// Upgrade turns a version 1 job into a version 2 one.
func (old SendEmailV1) Upgrade() SendEmail {
	return SendEmail{Recipient: old.To, Subject: old.Subject, Count: old.Count}
}
