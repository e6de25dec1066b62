package dashboard_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/failedsql"
	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// With a failed store in PostgreSQL, the failed page lists the jobs in
// the table, the job's page shows it failed, and retry and forget act on
// the table.
func TestFailedPagesOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sql.Open("postgres", pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	table := pgtest.Table(t, db)
	store, err := failedsql.New(failedsql.Config{DB: db, Table: table})
	require.NoError(t, err)
	require.NoError(t, store.Migrate(ctx))
	e, err := runtime.Open(ctx, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t), FailedStore: store})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	mux := http.NewServeMux()
	mux.Handle("/admin/queues/", http.StripPrefix("/admin/queues", dashboard.New(e, dashboard.Options{})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := bundle{ctx: runtime.WithDispatcher(ctx, e), engine: e, srv: srv,
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}

	r := runtime.NewRouter()
	runtime.Register(r, "test.Note", func(ctx context.Context, n note) error { return errors.New("declined: " + n.Text) })
	var ids []string
	for _, text := range []string{"first", "second"} {
		id, err := runtime.Dispatch(b.ctx, note{Text: text})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	w, err := runtime.NewWorker(e, r, runtime.WorkerConfig{Queues: []string{"notes"}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(b.ctx))
	rows := func() (n int) {
		require.NoError(t, db.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
		return n
	}
	require.Equal(t, 2, rows())

	code, body, _ := b.get(t, "failed")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, ids[0])
	require.Contains(t, body, ids[1])
	require.Contains(t, body, "declined: second")
	code, body, _ = b.get(t, "jobs/"+ids[0]+"?q=notes")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "declined: first")

	res := b.post(t, "failed/act", url.Values{"one": {"forget " + url.Values{"q": {"notes"}, "id": {ids[1]}}.Encode()}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, 1, rows())
	res = b.post(t, "failed/act", url.Values{"one": {"retry " + url.Values{"q": {"notes"}, "id": {ids[0]}}.Encode()}}, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Zero(t, rows())
	j, ok, err := runtime.NewInspector(e).FindJob(b.ctx, "notes", ids[0])
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, runtime.StateReady, j.State)
}
