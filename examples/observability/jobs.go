package main

//go:generate go tool jobgen

// ChargeOrder charges an order's card; the payment provider refuses the
// first try, so it is retried.
//
//job:queue=orders tries=3
type ChargeOrder struct {
	OrderID int
}

// SendReceipt emails the receipt of a charged order.
//
//job:queue=orders
type SendReceipt struct {
	OrderID int
}

// ShipOrder books the courier for an order.
//
//job:queue=orders
type ShipOrder struct {
	OrderID int
}
