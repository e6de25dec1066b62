package examplejobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// SendEmail sends one email. It is handled through the generated
// Handlers interface.
//
//job:queue=emails tries=3 backoff=50ms timeout=5s tags=mail
type SendEmail struct {
	To      string
	Subject string
	Headers map[string]string `msgpack:",omitempty"`
}

// ResizeImage makes thumbnails of an image; it goes to the default queue.
//
//job:timeout=10s
type ResizeImage struct {
	Path  string
	Sizes []int
}

// Welcome greets a new user. It has its own Handle method, so it has no
// method in Handlers, and it dispatches an AuditEntry of its own.
//
//job:queue=emails name=users.welcome
type Welcome struct {
	UserID int64
}

// Handle records the welcome and dispatches an audit entry for it.
func (j Welcome) Handle(ctx context.Context) error {
	Record(ctx, fmt.Sprintf("Welcome %d", j.UserID))
	_, err := AuditEntry{Action: "welcomed", UserID: j.UserID}.OnQueue("audit").Dispatch(ctx)
	return err
}

// AuditEntry is written once per audited action.
//
//job:queue=audit unique_for=1m
type AuditEntry struct {
	Action string
	UserID int64
}

// ErrDeclined is ChargeCard's error when the card is declined.
var ErrDeclined = errors.New("card declined")

// ChargeCard charges a card. It may be tried three times, but fails for
// good after two exceptions, and then its failed hook runs.
//
//job:queue=billing tries=3 backoff=100ms max_exceptions=2
type ChargeCard struct {
	OrderID string
	Cents   int64
}

// Failed records that the charge failed for good.
func (j ChargeCard) Failed(ctx context.Context, err error) {
	Record(ctx, fmt.Sprintf("ChargeCard %s failed (declined: %t)", j.OrderID, errors.Is(err, ErrDeclined)))
}

// Quote is what QuoteShipping returns to whoever awaits it.
type Quote struct {
	Cents int64
	Days  int
}

// QuoteShipping prices a parcel; its handler returns a Quote, which the
// dispatcher reads with the generated Await or Result.
//
//job:queue=quotes result=Quote timeout=5s
type QuoteShipping struct {
	Grams int64
	// Sleep makes the handler take this long (for the test of a timeout).
	Sleep time.Duration
}

// Receipt is what RefundOrder returns.
type Receipt struct {
	OrderID string
	Cents   int64
}

// RefundOrder refunds an order. It handles itself and returns a Receipt.
//
//job:queue=quotes result=Receipt
type RefundOrder struct {
	OrderID string
	Cents   int64
}

// Handle refunds the order, and refuses a refund of nothing.
func (j RefundOrder) Handle(ctx context.Context) (Receipt, error) {
	if j.Cents <= 0 {
		return Receipt{}, runtime.FailRequest(fmt.Errorf("refund of %d cents for order %s", j.Cents, j.OrderID))
	}
	Record(ctx, "RefundOrder "+j.OrderID)
	return Receipt{OrderID: j.OrderID, Cents: j.Cents}, nil
}
