package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jobgen/jobgen/internal/outboxsql"
)

// ErrNoOutboxTable is wrapped by the error of CheckOutbox, and so of a
// relay's start, when the outbox table does not exist.
var ErrNoOutboxTable = errors.New("jobgen: the outbox table does not exist")

// ErrOutboxVersion is wrapped by the error of CheckOutbox, and so of a
// relay's start, when the outbox table's schema is older than
// OutboxSchemaVersion.
var ErrOutboxVersion = errors.New("jobgen: the outbox table's schema is older than this code needs")

// CheckOutbox returns an error wrapping ErrNoOutboxTable, naming the
// table and how to create it, when db has no outbox table named table
// (DefaultOutboxTable if empty), and one wrapping ErrOutboxVersion,
// naming outbox:migrate, when the table's schema is older than
// OutboxSchemaVersion. A relay runs it as it starts; an
// application may run it at its own start, with its engine's
// EngineConfig.OutboxTable, to fail there rather than at its first
// DispatchTx: an INSERT into a missing table fails, and PostgreSQL then
// aborts the caller's whole transaction (docs/outbox.md, "Set up").
func CheckOutbox(ctx context.Context, db *sql.DB, table string) error {
	table = cmpOr(table, DefaultOutboxTable)
	if err := checkOutboxTable(table); err != nil {
		return err
	}
	if db == nil {
		return fmt.Errorf("%w: check outbox %s: the database is nil", ErrInvalid, table)
	}
	ok, err := outboxsql.Exists(ctx, db, table)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s: run outbox:migrate (or runtime.MigrateOutbox), or add runtime.OutboxDDL(%q) to the application's migrations", ErrNoOutboxTable, table, table)
	}
	v, err := outboxsql.Version(ctx, db, table)
	if err != nil {
		return err
	}
	if v < OutboxSchemaVersion {
		return fmt.Errorf("%w: %s is at version %d, this code needs %d: run outbox:migrate (or runtime.MigrateOutbox)", ErrOutboxVersion, table, v, OutboxSchemaVersion)
	}
	return nil
}
