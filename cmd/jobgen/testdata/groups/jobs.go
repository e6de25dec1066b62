// Package groups holds jobs in fair groups, one with a limit per group.
package groups

// TenantID names a tenant.
type TenantID string

// ImportFeed imports one feed of a tenant; tenants take turns.
//
//job:queue=imports group=Tenant
type ImportFeed struct {
	Tenant TenantID
	URL    string
}

// CallAPI calls a customer's API, at most two calls per customer at once.
//
//job:queue=calls group=CustomerID group_limit=2
type CallAPI struct {
	CustomerID int64
	Path       string
}
