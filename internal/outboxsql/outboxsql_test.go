package outboxsql

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCheckTable(t *testing.T) {
	for _, bad := range []string{"Jobs", "jobs; DROP TABLE x", "a.b.c", "", "9jobs"} {
		require.Error(t, CheckTable(bad), bad)
		_, err := DDL(bad)
		require.Error(t, err, bad)
	}
	for _, good := range []string{"jobgen_outbox", "app.jobs_outbox", "_x9"} {
		require.NoError(t, CheckTable(good), good)
	}
}

func TestDDL(t *testing.T) {
	ddl, err := DDL("app.jobs_outbox")
	require.NoError(t, err)
	require.Contains(t, ddl, "CREATE TABLE IF NOT EXISTS app.jobs_outbox (")
	require.Contains(t, ddl, "CREATE INDEX IF NOT EXISTS jobs_outbox_claim ON app.jobs_outbox")
	require.NotContains(t, ddl, "{{")
	// Version 3's up drops the trigger version 1 makes, and its down
	// puts it back.
	up := UpFor(3, "app.jobs_outbox")
	require.Contains(t, ddl, up)
	require.Contains(t, up, "DROP TRIGGER IF EXISTS jobs_outbox_notify ON app.jobs_outbox;")
	down := names("app.jobs_outbox").Replace(Steps[2].Down)
	require.Contains(t, down, "pg_notify('app_jobs_outbox', '')")
	require.Contains(t, down, "CREATE OR REPLACE TRIGGER jobs_outbox_notify")
	require.Equal(t, "SELECT pg_notify('app_jobs_outbox', '')", Notify("app.jobs_outbox"))
}

type execs struct {
	queries []string
	args    [][]any
}

func (e *execs) ExecContext(_ context.Context, q string, args ...any) (sql.Result, error) {
	e.queries = append(e.queries, q)
	e.args = append(e.args, args)
	return nil, nil
}

func TestInsertChunks(t *testing.T) {
	rows := make([]Row, InsertRows+2)
	for i := range rows {
		rows[i] = Row{ID: "j", Kind: KindJob, Queue: "q", Name: "n", DelayMS: 5, Payload: []byte("p")}
	}
	var e execs
	dup, err := Insert(context.Background(), &e, "t", rows)
	require.NoError(t, err)
	require.Empty(t, dup)
	require.Len(t, e.queries, 2)
	require.Len(t, e.args[0], InsertRows*arity)
	require.Equal(t, "INSERT INTO t ("+columns+") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9),($10,$11,$12,$13,$14,$15,$16,$17,$18)", e.queries[1])
	require.Equal(t, []any{"j", KindJob, "", "q", "n", int64(5), "", int64(0), []byte("p")}, e.args[1][:arity])
	_, err = Insert(context.Background(), nil, "t", rows)
	require.Error(t, err)
}

func TestStatementsQuoteNames(t *testing.T) {
	q := Claim("t", []string{"", "o'k"}, 10, 3*time.Second)
	require.Contains(t, q, "connection IN ('','o''k')")
	require.Contains(t, q, "LIMIT 10 FOR UPDATE SKIP LOCKED")
	require.Contains(t, q, "'3000', true")
	require.True(t, strings.HasSuffix(Present("t", []string{"a'b"}), "WHERE id IN ('a''b')"))
}

// Need is the last version, and the versions are 1, 2, ... in order.
func TestNeedIsTheLatest(t *testing.T) {
	for i, s := range Steps {
		require.Equal(t, i+1, s.Version)
		require.NotEmpty(t, s.Up)
		require.NotEmpty(t, s.Down)
	}
	require.Equal(t, len(Steps), Need)
}
