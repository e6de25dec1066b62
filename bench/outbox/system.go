package outboxbench

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// job is the benchmark job: its sequence number in the phase, and filler.
type job struct {
	Seq int64
	Pad string
}

// system is one queue, driven through its public API.
type system interface {
	// name labels the system's column.
	name() string
	// settings describes how the system is set up, for the report.
	settings() string
	// pool is the pgx pool the producers use.
	pool() *pgxpool.Pool
	// jobTable is the table, schema-qualified, that jobs wait in.
	jobTable() string
	// reset empties the system's tables and keys, with nothing running.
	reset(ctx context.Context) error
	// insert writes jobs in tx: with one job through the system's call
	// for one, with more through its call for many.
	insert(ctx context.Context, tx pgx.Tx, jobs []job) error
	// start starts the consumers, whose handlers call h with the job's
	// sequence number.
	start(ctx context.Context, h func(seq int64)) error
	// stop stops what start started.
	stop(ctx context.Context) error
	// close releases the system.
	close()
}

// pad returns n bytes of filler.
func pad(n int) string { return strings.Repeat("x", n) }
