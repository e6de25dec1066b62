// Package pgtest gives tests the PostgreSQL server that scripts/test
// starts (scripts/postgres), named by JOBGEN_TEST_POSTGRES_URL, and a
// table of their own in it.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
)

// EnvURL names the server's URL.
const EnvURL = "JOBGEN_TEST_POSTGRES_URL"

// URL returns the server's URL. Without one the test is skipped on a
// developer's machine, and fails in CI (JOBGEN_CI=1).
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("JOBGEN_CI") != "" {
			t.Fatalf("pgtest: %s is not set; scripts/test starts a server (scripts/postgres)", EnvURL)
		}
		t.Skipf("pgtest: %s is not set; scripts/postgres start DIR starts a server", EnvURL)
	}
	return u
}

// Table returns a table name of the test's own, and drops the table, the
// tables beside it and its notify function when the test ends.
func Table(t testing.TB, db *sql.DB) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "outbox_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS "+name+", "+name+"_relays, "+name+"_migrations, "+name+"_completed")
		_, _ = db.ExecContext(ctx, "DROP FUNCTION IF EXISTS "+name+"_notify()")
	})
	return name
}
