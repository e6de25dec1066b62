// Package mail is a schema lock case.
package mail

// SendEmail sends one email.
//
//job:queue=emails
type SendEmail struct {
	To      string
	Subject string
	Count   int32
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
