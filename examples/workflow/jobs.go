package main

//go:generate go tool jobgen

import (
	"context"
	"errors"
	"strings"

	"github.com/jobgen/jobgen/runtime"
)

// The order pipeline's jobs. Charging the card and reserving the stock
// run in parallel; shipping needs both their results; then one email
// goes out per line item, and a summary waits for all of them.

// Receipt is what a charge returns.
type Receipt struct {
	ChargeID string
	Cents    int
}

// ChargeCard charges an order. It is tried once: a declined card will
// not be accepted by asking again.
//
//job:queue=payments tries=1 result=Receipt
type ChargeCard struct {
	OrderID string
	Cents   int
	Card    string
}

// Reservation is what a stock reservation returns.
type Reservation struct {
	Warehouse string
	Items     []string
}

// ReserveStock sets an order's items aside.
//
//job:queue=stock result=Reservation
type ReserveStock struct {
	OrderID string
	Items   []string
}

// Shipment is what shipping returns.
type Shipment struct {
	Tracking string
}

// ShipOrder ships an order once it is paid for and its stock reserved,
// with both results.
//
//job:queue=shipping needs=ChargeCard,ReserveStock result=Shipment
type ShipOrder struct {
	OrderID string
}

// NotifyLines sends one email per line item of a shipped order, and a
// summary once they are all sent.
//
//job:queue=mail
type NotifyLines struct {
	OrderID string
	Items   []string
}

// EmailSent is what an email returns.
type EmailSent struct {
	To   string
	Item string
}

// EmailLine emails the customer about one line item.
//
//job:queue=mail result=EmailSent
type EmailLine struct {
	OrderID string
	Item    string
}

// Summarize writes the summary of an order's emails, handed every
// email's result in the order they were spawned.
//
//job:queue=mail needs=[]EmailLine
type Summarize struct {
	OrderID string
}

// ReleaseStock puts an order's reserved items back on the shelf: the
// workflow's catch queues it when the order fails.
//
//job:queue=stock
type ReleaseStock struct {
	OrderID string
}

// errDeclined is the bank's answer for the card "declined".
var errDeclined = errors.New("card declined")

// handlers handles the jobs, printing what they do.
type handlers struct{ p *printer }

func (h handlers) HandleChargeCard(ctx context.Context, job ChargeCard) (Receipt, error) {
	if job.Card == "declined" {
		h.p.say("order %s: charging $%d.%02d: declined", job.OrderID, job.Cents/100, job.Cents%100)
		return Receipt{}, errDeclined
	}
	h.p.say("order %s: charged $%d.%02d", job.OrderID, job.Cents/100, job.Cents%100)
	return Receipt{ChargeID: "ch_" + job.OrderID, Cents: job.Cents}, nil
}

func (h handlers) HandleReserveStock(ctx context.Context, job ReserveStock) (Reservation, error) {
	h.p.say("order %s: reserved %s", job.OrderID, strings.Join(job.Items, ", "))
	return Reservation{Warehouse: "east", Items: job.Items}, nil
}

func (h handlers) HandleShipOrder(ctx context.Context, job ShipOrder, in ShipOrderInputs) (Shipment, error) {
	h.p.say("order %s: shipped %d items from %s, paid by %s", job.OrderID, len(in.ReserveStock.Items), in.ReserveStock.Warehouse, in.ChargeCard.ChargeID)
	return Shipment{Tracking: "trk_" + job.OrderID}, nil
}

func (h handlers) HandleNotifyLines(ctx context.Context, job NotifyLines) error {
	emails := make([]EmailLine, len(job.Items))
	for i, item := range job.Items {
		emails[i] = EmailLine{OrderID: job.OrderID, Item: item}
	}
	steps, err := runtime.SpawnMany(ctx, emails)
	if err != nil {
		return err
	}
	_, err = Summarize{OrderID: job.OrderID}.SpawnAfter(ctx, steps)
	return err
}

func (h handlers) HandleEmailLine(ctx context.Context, job EmailLine) (EmailSent, error) {
	return EmailSent{To: "customer-" + job.OrderID, Item: job.Item}, nil
}

func (h handlers) HandleSummarize(ctx context.Context, job Summarize, in SummarizeInputs) error {
	items := make([]string, len(in.EmailLine))
	for i, e := range in.EmailLine {
		items[i] = e.Item
	}
	h.p.say("order %s: emailed %s about %s", job.OrderID, in.EmailLine[0].To, strings.Join(items, ", "))
	return nil
}

func (h handlers) HandleReleaseStock(ctx context.Context, job ReleaseStock) error {
	h.p.say("order %s: stock released", job.OrderID)
	return nil
}
