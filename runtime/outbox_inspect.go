package runtime

import (
	"context"
	"time"
)

// OutboxBacklog is what the outbox's relays last saw of its table. A
// running relay (package outbox) writes it to Redis every 5 seconds.
type OutboxBacklog struct {
	// Table is the outbox table's name.
	Table string
	// Rows is how many rows wait to be relayed, parked ones included.
	Rows int64
	// Parked is how many rows a relay could not push: their error column
	// says why.
	Parked int64
	// Oldest is when the oldest row was written; zero if there is none.
	Oldest time.Time
	// At is when a relay read these numbers, by the Redis clock. Far in
	// the past, it means no relay runs.
	At time.Time
}

// Age returns how long the oldest row had waited at At; 0 without rows.
func (b OutboxBacklog) Age() time.Duration {
	if b.Oldest.IsZero() || b.At.Before(b.Oldest) {
		return 0
	}
	return b.At.Sub(b.Oldest)
}

// Outbox returns what the outbox's relays last saw of its table, and
// false if no relay has written it.
func (i *Inspector) Outbox(ctx context.Context) (OutboxBacklog, bool, error) {
	r, ok, err := i.e.store.ReadOutboxBacklog(ctx)
	if !ok || err != nil {
		return OutboxBacklog{}, false, err
	}
	b := OutboxBacklog{Table: r.Table, Rows: r.Rows, Parked: r.Parked, At: time.UnixMilli(r.At)}
	if r.Oldest > 0 {
		b.Oldest = time.UnixMilli(r.Oldest)
	}
	return b, true, nil
}
