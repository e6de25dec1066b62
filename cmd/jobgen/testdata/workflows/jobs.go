// Package workflows is a golden case: jobs that are steps of a workflow.
// Charge and ReserveStock both come before Ship (a diamond, with Ship
// and Summary after it), SendEmail fans out and Summary fans in, and
// Summary handles itself.
package workflows

import "context"

// Receipt is what Charge returns.
type Receipt struct {
	ChargeID string
	Cents    int64
}

// Reservation is what ReserveStock returns.
type Reservation struct {
	Warehouse string
}

// Shipment is what Ship returns.
type Shipment struct {
	Tracking string
}

// EmailSent is what SendEmail returns.
type EmailSent struct {
	MessageID string
}

// Charge charges an order.
//
//job:queue=payments result=Receipt
type Charge struct {
	OrderID string
}

// ReserveStock reserves an order's items, under its own wire name.
//
//job:name=orders.reserve result=Reservation
type ReserveStock struct {
	OrderID string
}

// Ship ships an order once it is charged and its stock reserved.
//
//job:queue=orders needs=Charge,ReserveStock result=Shipment
type Ship struct {
	OrderID string
}

// SendEmail sends one email about an order.
//
//job:result=EmailSent
type SendEmail struct {
	To string
}

// Summary handles itself, handed the shipment and every email sent.
//
//job:needs=Ship,[]SendEmail
type Summary struct {
	OrderID string
}

// Handle logs the summary.
func (j Summary) Handle(ctx context.Context, in SummaryInputs) error {
	_ = in.Ship.Tracking
	_ = len(in.SendEmail)
	return nil
}
