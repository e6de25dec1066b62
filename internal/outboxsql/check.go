package outboxsql

import (
	"context"
	"database/sql"
	"fmt"
)

// Exists reports whether the outbox table named table exists in db.
func Exists(ctx context.Context, db *sql.DB, table string) (bool, error) {
	var name sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT to_regclass($1)::text", table).Scan(&name); err != nil {
		return false, fmt.Errorf("look for outbox table %s: %w", table, err)
	}
	return name.Valid, nil
}
