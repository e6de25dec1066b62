package main

//go:generate go tool jobgen

import (
	"context"
	"errors"
	"strings"
)

// The jobs of this example handle themselves: each has a Handle method,
// so the generated Handlers interface is empty and Register takes nil.

// ReserveStock sets an order's items aside.
//
//job:queue=orders
type ReserveStock struct {
	OrderID string
	Items   []string
}

// Handle reserves the items.
func (j ReserveStock) Handle(ctx context.Context) error {
	say(ctx, "order %s: reserved %s", j.OrderID, strings.Join(j.Items, ", "))
	return nil
}

// ChargeCard charges an order. It is tried once: a declined card will
// not be accepted by asking again.
//
//job:queue=orders tries=1
type ChargeCard struct {
	OrderID string
	Cents   int
	Card    string
}

// errDeclined is the bank's answer for the card "declined".
var errDeclined = errors.New("card declined")

// Handle charges the card.
func (j ChargeCard) Handle(ctx context.Context) error {
	if j.Card == "declined" {
		say(ctx, "order %s: charging $%d.%02d: declined", j.OrderID, j.Cents/100, j.Cents%100)
		return errDeclined
	}
	say(ctx, "order %s: charged $%d.%02d", j.OrderID, j.Cents/100, j.Cents%100)
	return nil
}

// ShipOrder hands an order to the carrier.
//
//job:queue=orders
type ShipOrder struct {
	OrderID string
}

// Handle ships the order.
func (j ShipOrder) Handle(ctx context.Context) error {
	say(ctx, "order %s: shipped", j.OrderID)
	return nil
}

// EmailReceipt sends the receipt of a shipped order.
//
//job:queue=orders
type EmailReceipt struct {
	OrderID string
}

// Handle sends the receipt.
func (j EmailReceipt) Handle(ctx context.Context) error {
	say(ctx, "order %s: receipt emailed", j.OrderID)
	return nil
}

// ReleaseStock puts an order's reserved items back on the shelf.
//
//job:queue=orders
type ReleaseStock struct {
	OrderID string
}

// Handle releases the stock.
func (j ReleaseStock) Handle(ctx context.Context) error {
	say(ctx, "order %s: stock released", j.OrderID)
	return nil
}

// printerKey carries the printer to the handlers on their context: a job
// with its own Handle method has no struct to hold dependencies, so they
// come from the context the worker runs with.
type printerKey struct{}

func say(ctx context.Context, format string, args ...any) {
	if w, ok := ctx.Value(printerKey{}).(*printer); ok {
		w.say(format, args...)
	}
}
