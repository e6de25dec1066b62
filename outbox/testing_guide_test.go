package outbox_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/jobtest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// signUp is the code under test of docs/testing.md: it writes its job
// into the transaction that writes the user, and commits only if ok.
func signUp(ctx context.Context, db *sql.DB, email string, ok bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// (the user's row would be written here, in tx)
	if _, err := runtime.DispatchTx(ctx, tx, mailJob{To: email}); err != nil {
		return err
	}
	if !ok {
		return nil // rolled back: no user, no job
	}
	return tx.Commit()
}

// The example of docs/testing.md, "Code that dispatches in a
// transaction": a test PostgreSQL, the harness's embedded Redis, and one
// relay pass between them. It must keep working as the guide shows it.
func TestTestingGuideDispatchTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	table := pgtest.Table(t, db) // a table of the test's own

	h := jobtest.NewHarness(t, jobtest.HarnessConfig{Engine: runtime.EngineConfig{OutboxTable: table}})
	require.NoError(t, runtime.MigrateOutbox(ctx, db, table))
	relay, err := outbox.NewRelay(h.Engine, outbox.RelayConfig{DB: db})
	require.NoError(t, err)
	var sent []string
	runtime.Register(h.Router, "test.Mail", func(ctx context.Context, j mailJob) error {
		sent = append(sent, j.To)
		return nil
	})

	require.NoError(t, signUp(h.Context(ctx), db, "ada@example.com", true))
	require.NoError(t, signUp(h.Context(ctx), db, "bob@example.com", false))
	_, err = relay.RelayOnce(ctx) // push what committed
	require.NoError(t, err)
	require.NoError(t, h.Drain(ctx)) // run it
	require.Equal(t, []string{"ada@example.com"}, sent, "the rolled-back sign-up sent nothing")
}
