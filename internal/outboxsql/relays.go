package outboxsql

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The relays table: a row per running relay, the time of its last
// completed pass (relays.sql).

//go:embed relays.sql
var relaysDDL string

// RelaysSuffix ends the name of the relays table of an outbox table.
const RelaysSuffix = "_relays"

// Relays is the name of the relays table of the outbox table named table.
func Relays(table string) string { return table + RelaysSuffix }

// CheckRelays checks that the tables and indexes beside table (its
// relays, version and completed tables) have names PostgreSQL keeps
// whole (63 bytes a part).
func CheckRelays(table string) error {
	for _, name := range []string{Relays(table), Migrations(table), Completions(table) + "_at"} {
		if len(name[strings.LastIndexByte(name, '.')+1:]) > 63 {
			return fmt.Errorf("%q is too long: the name %q beside it must fit in 63 characters", table, name)
		}
	}
	return nil
}

// Pass is the statement that records a relay's completed pass: $1 the
// relay, $2 the jobs it relayed since it started.
func Pass(table string) string {
	return "INSERT INTO " + Relays(table) + " (relay, relayed) VALUES ($1, $2) " +
		"ON CONFLICT (relay) DO UPDATE SET passed_at = clock_timestamp(), relayed = EXCLUDED.relayed"
}

// Forget is the statement that deletes the rows of relays that have not
// completed a pass for a day: each start of a relay writes a new row.
func Forget(table string) string {
	return "DELETE FROM " + Relays(table) + " WHERE passed_at < clock_timestamp() - interval '1 day'"
}

// Health is what the database says of an outbox table and its relays.
type Health struct {
	// Table says the outbox table exists; Relays, its relays table.
	Table, Relays bool
	// Rows waiting, parked among them, and the age of the oldest row
	// not parked, by the database's clock.
	Rows, Parked int64
	Oldest       time.Duration
	// Passed says a relay has recorded a pass; LastPass is how long ago
	// the latest was, and Live how many relays completed one within
	// live.
	Passed   bool
	LastPass time.Duration
	Live     int64
}

// ReadHealth reads the health of the outbox table named table in db: in
// one statement that finds which tables exist, then one read of each.
func ReadHealth(ctx context.Context, db *sql.DB, table string, live time.Duration) (Health, error) {
	if db == nil {
		return Health{}, errors.New("no database")
	}
	var h Health
	var out, relays sql.NullString
	err := db.QueryRowContext(ctx, "SELECT to_regclass($1)::text, to_regclass($2)::text", table, Relays(table)).Scan(&out, &relays)
	if err != nil {
		return h, fmt.Errorf("read outbox %s: %w", table, err)
	}
	h.Table, h.Relays = out.Valid, relays.Valid
	if h.Table {
		var oldest sql.NullFloat64
		err := db.QueryRowContext(ctx, "SELECT count(*), count(*) FILTER (WHERE error IS NOT NULL), "+
			"EXTRACT(EPOCH FROM clock_timestamp() - min(created_at) FILTER (WHERE error IS NULL))::float8 FROM "+table).
			Scan(&h.Rows, &h.Parked, &oldest)
		if err != nil {
			return h, fmt.Errorf("read outbox %s: %w", table, err)
		}
		h.Oldest = max(seconds(oldest.Float64), 0)
	}
	if h.Relays {
		var last sql.NullFloat64
		err := db.QueryRowContext(ctx, "SELECT EXTRACT(EPOCH FROM clock_timestamp() - max(passed_at))::float8, "+
			"count(*) FILTER (WHERE passed_at > clock_timestamp() - $1 * interval '1 millisecond') FROM "+Relays(table), live.Milliseconds()).
			Scan(&last, &h.Live)
		if err != nil {
			return h, fmt.Errorf("read the relays of outbox %s: %w", table, err)
		}
		h.Passed, h.LastPass = last.Valid, max(seconds(last.Float64), 0)
	}
	return h, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
