// Package shop is a golden case: an event with queued listeners of their
// own options, a synchronous one, an event with none, and a job beside
// them.
package shop

// OrderShipped is fired when an order leaves the warehouse.
//
//job:event
type OrderShipped struct {
	OrderID string
	Items   []string
}

// EmailShipmentNotice mails the customer.
//
//job:listen=OrderShipped queue=mail tries=3 backoff=10s
type EmailShipmentNotice struct{}

// SMSShipmentNotice texts the customer.
//
//job:listen=OrderShipped name=shop.sms queue=mail tries=5 timeout=20s
type SMSShipmentNotice struct{}

// RecordShipment writes the audit log inside Fire.
//
//job:listen=OrderShipped sync
type RecordShipment struct{}

// StockCounted has no listener yet.
//
//job:event
type StockCounted struct{ SKU string }

// Restock is a plain job.
//
//job:queue=warehouse
type Restock struct{ SKU string }
