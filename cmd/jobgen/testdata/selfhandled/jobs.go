// Package orders is a golden case: every job has its own Handle method,
// so Handlers is empty, and the package's own code calls the generated
// methods (which do not exist while jobgen loads the package).
package orders

import (
	"context"
	"time"
)

// PlaceOrder places an order, then has it shipped and the customer told.
//
//job:queue=orders tries=3 backoff=1s,5s,30s retry_until=1h
type PlaceOrder struct {
	OrderID string
	Lines   []Line
}

// Line is one line of an order.
type Line struct {
	SKU      string
	Quantity int
}

// Handle chains the follow-up jobs.
func (j PlaceOrder) Handle(ctx context.Context) error {
	_, err := ShipOrder{OrderID: j.OrderID}.
		WithChain(NotifyCustomer{OrderID: j.OrderID, Template: "shipped"}).
		Delay(time.Minute).
		Dispatch(ctx)
	return err
}

// ShipOrder ships an order.
//
//job:queue=shipping timeout=2m fail_on_timeout
type ShipOrder struct {
	OrderID string
}

// Handle ships the order.
func (j ShipOrder) Handle(ctx context.Context) error { return nil }

// Failed is ShipOrder's failed hook.
func (j ShipOrder) Failed(ctx context.Context, err error) {}

// NotifyCustomer sends the customer a message.
//
//job:queue=notifications connection=mail delay=30s unique_for=10m tags=customer
type NotifyCustomer struct {
	OrderID  string
	Template string
}

// Handle sends the message.
func (j NotifyCustomer) Handle(ctx context.Context) error { return nil }
