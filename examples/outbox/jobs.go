package main

//go:generate go tool jobgen

// SendOrderConfirmation emails the confirmation of an order. It is
// dispatched in the transaction that inserts the order, so it exists if
// and only if the order does.
//
//job:queue=emails tries=3 backoff=1s,10s
type SendOrderConfirmation struct {
	OrderID int64
	Email   string
}
