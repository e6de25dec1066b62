package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/internal/outboxsql"
	"github.com/jobgen/jobgen/runtime"
)

// LiveWithin is how recent a relay's last completed pass must be for
// Health.Live to count it.
const LiveWithin = time.Minute

// Health is the outbox as PostgreSQL itself holds it: its backlog, and
// when a relay last completed a pass over it. It is read from the
// database alone, so a dead relay and a Redis outage show in it; what a
// relay publishes to Redis (runtime.Inspector.Outbox) is only as fresh
// as the relay.
type Health struct {
	// Table is the outbox table's name.
	Table string
	// Missing says the outbox table does not exist: DispatchTx fails, and
	// aborts its caller's transaction. Nothing else is read then.
	Missing bool
	// NoRelaysTable says the table of the relays' passes (the outbox
	// table's name + "_relays") does not exist: outbox:migrate creates it.
	NoRelaysTable bool
	// Rows is how many rows wait to be relayed, parked ones included.
	Rows int64
	// Parked is how many rows a relay could not push: their error column
	// says why.
	Parked int64
	// Oldest is how long the oldest row that is not parked has waited, by
	// the database's clock; 0 without one.
	Oldest time.Duration
	// Passed says a relay has recorded a completed pass (in the last day).
	Passed bool
	// SincePass is how long ago the latest completed pass of any relay
	// was, by the database's clock.
	SincePass time.Duration
	// Live is how many relays completed a pass within LiveWithin.
	Live int64
}

// ReadHealth reads the health of the outbox table named table (e's
// EngineConfig.OutboxTable, or runtime.DefaultOutboxTable, when empty)
// from db. A missing table is no error: Health.Missing says so.
func ReadHealth(ctx context.Context, db *sql.DB, table string) (Health, error) {
	if table == "" {
		table = runtime.DefaultOutboxTable
	}
	if err := outboxsql.CheckTable(table); err != nil {
		return Health{}, fmt.Errorf("%w: outbox table %w", runtime.ErrInvalid, err)
	}
	h, err := outboxsql.ReadHealth(ctx, db, table, LiveWithin)
	if err != nil {
		return Health{}, err
	}
	return Health{
		Table: table, Missing: !h.Table, NoRelaysTable: h.Table && !h.Relays,
		Rows: h.Rows, Parked: h.Parked, Oldest: h.Oldest,
		Passed: h.Passed, SincePass: h.LastPass, Live: h.Live,
	}, nil
}

// Problems returns what is wrong with the outbox, each as one line that
// says how to fix it: a missing table, always; with maxAge > 0, a row
// not parked that has waited longer than maxAge, and rows waiting while
// no relay has completed a pass within max(maxAge, LiveWithin); with
// maxIdle > 0, no relay having completed a pass within maxIdle, rows or
// not.
func (h Health) Problems(maxAge, maxIdle time.Duration) []string {
	if h.Missing {
		return []string{fmt.Sprintf("outbox table %s does not exist, so DispatchTx fails: run outbox:migrate, or add runtime.OutboxDDL(%q) to the application's migrations", h.Table, h.Table)}
	}
	var out []string
	if maxAge > 0 && h.Oldest > maxAge {
		out = append(out, fmt.Sprintf("outbox %s (oldest row waited %s, more than %s)", h.Table, h.Oldest.Round(time.Millisecond), maxAge))
	}
	idle := maxIdle
	if idle <= 0 && maxAge > 0 && h.Rows > h.Parked {
		idle = max(maxAge, LiveWithin)
	}
	switch {
	case idle <= 0:
	case h.NoRelaysTable:
		out = append(out, fmt.Sprintf("outbox %s (table %s, where relays record their passes, does not exist: run outbox:migrate)", h.Table, outboxsql.Relays(h.Table)))
	case !h.Passed:
		out = append(out, fmt.Sprintf("outbox %s (%d %s waiting, and no relay has completed a pass: run queue:relay or queue:work --relay)", h.Table, h.Rows, rows(h.Rows)))
	case h.SincePass > idle:
		out = append(out, fmt.Sprintf("outbox %s (%d %s waiting, and no relay has completed a pass for %s, more than %s: is a relay running, and can it reach Redis?)",
			h.Table, h.Rows, rows(h.Rows), h.SincePass.Round(time.Second), idle))
	}
	return out
}

func rows(n int64) string {
	if n == 1 {
		return "row"
	}
	return "rows"
}
