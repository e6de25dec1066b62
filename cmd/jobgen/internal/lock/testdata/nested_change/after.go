// Package mail is a schema lock case: a struct that a job's field holds.
package mail

// Order ships an order.
//
//job:queue=orders
type Order struct {
	Items []Item
}

// Item is a line of an Order.
type Item struct {
	SKU int64
	N   int
}
