// Package emails is a golden case: jobs with every annotation key, a
// job with its own Handle method, and one with a failed hook.
package emails

import (
	"context"
	"time"
)

// SendEmail sends one email.
//
//job:queue=emails tries=5 backoff=10s,1m timeout=30s
type SendEmail struct {
	To      string
	Subject string
	Body    string `msgpack:"body,omitempty"`
}

// Failed is SendEmail's failed hook.
func (j SendEmail) Failed(ctx context.Context, err error) {}

// Everything sets every key.
//
//job:name=billing.everything queue=billing connection=secondary tries=3
//job:backoff=0s,1500ms,1h30m timeout=2m retry_until=24h max_exceptions=2
//job:fail_on_timeout delay=90s unique_for=1h encrypted=true tags=billing,nightly
type Everything struct {
	Amounts map[string]float64
	When    time.Time `msgpack:"At"`
	Next    *Everything
	Items   []Item
	Raw     []byte
	Any     any
	secret  string
}

// Item is a part of Everything.
type Item struct {
	SKU string
	N   int
}

// Welcome handles itself.
//
// job:
type Welcome struct {
	UserID int64
}

// Handle sends the welcome mail.
func (j Welcome) Handle(ctx context.Context) error { return nil }

// Ping carries nothing.
//
//job:queue=health
type Ping struct{}

// ReindexUser is debounced per user: of a burst of dispatches for one
// user, only the last runs, 30s after it, and none waits past 5m.
//
//job:queue=search debounce=30s debounce_key=UserID debounce_max_wait=5m
type ReindexUser struct {
	UserID int64
	Reason string
}
