// Package results is a golden case: jobs that return a result, one
// through Handlers and one through its own Handle method.
package results

import "context"

// Price is what Quote returns.
type Price struct {
	Cents int64
}

// Quote is handled through Handlers and returns a Price.
//
//job:queue=quotes result=Price
type Quote struct {
	Grams int64
}

// Refund handles itself and returns a Price.
//
//job:result=Price
type Refund struct {
	Cents int64
}

// Handle refunds.
func (j Refund) Handle(ctx context.Context) (Price, error) { return Price{Cents: j.Cents}, nil }
