package exampleevents

// OrderShipped is fired when an order leaves the warehouse.
//
//job:event
type OrderShipped struct {
	OrderID string
}

// EmailCustomer mails the customer.
//
//job:listen=OrderShipped queue=shipping tries=2
type EmailCustomer struct{}

// NotifyCarrier tells the carrier; it is retried more.
//
//job:listen=OrderShipped queue=shipping tries=3
type NotifyCarrier struct{}

// UpdateCRM records the shipment in the CRM.
//
//job:listen=OrderShipped queue=shipping
type UpdateCRM struct{}

// AuditShipment writes the audit log inside Fire.
//
//job:listen=OrderShipped sync
type AuditShipment struct{}
