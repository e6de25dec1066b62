package laravel_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// failedJobsBundle is an app's failed_jobs table on PostgreSQL, made by
// Laravel's migration, beside a Laravel connection.
type failedJobsBundle struct {
	phpBundle
	table string
	// db's sessions run in America/New_York, as an app's pgsql
	// connection may (config/database.php, timezone).
	db *sql.DB
}

const sessionZone = "America/New_York"

func setupFailedJobs(t *testing.T, ctx context.Context) failedJobsBundle {
	t.Helper()
	b := setupPHP(t)
	dbURL := pgtest.URL(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("timezone", sessionZone) // a run-time parameter of every session lib/pq opens
	u.RawQuery = q.Encode()
	db, err := sql.Open("postgres", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	var zone string
	require.NoError(t, db.QueryRowContext(ctx, "SHOW TimeZone").Scan(&zone))
	require.Equal(t, sessionZone, zone, "the session's timezone is not the app's")
	table := pgtest.Table(t, db)
	b.env = append(b.env, "DB_HOST="+u.Hostname(), "DB_PORT="+u.Port(), "DB_DATABASE="+strings.TrimPrefix(u.Path, "/"),
		"DB_USERNAME="+u.User.Username(), "FAILED_TABLE="+table, "DB_TIMEZONE="+sessionZone, "APP_TIMEZONE=UTC")
	b.run(t, ctx, "failed.php", "migrate")
	return failedJobsBundle{phpBundle: b, table: table, db: db}
}

// failOnGo runs the jobs on queue on a Go worker that fails each of them,
// into the app's failed_jobs table.
func (b failedJobsBundle) failOnGo(t *testing.T, ctx context.Context, queue string) {
	t.Helper()
	rt := runtime.NewRouter()
	fail := func() error { return runtime.FailRequest(errors.New("the mail server refused the message")) }
	runtime.Register(rt, SendWelcomeEmail{}.JobName(), func(context.Context, SendWelcomeEmail) error { return fail() })
	runtime.Register(rt, ResizeAvatar{}.JobName(), func(context.Context, ResizeAvatar) error { return fail() })
	w, err := laravel.NewWorker(b.q, newMapper(), rt, laravel.WorkerConfig{
		Queues: []string{queue}, Sleep: 50 * time.Millisecond, StopWhenEmpty: true,
		FailedJobs: &laravel.FailedJobs{DB: b.db, Table: b.table},
	})
	require.NoError(t, err)
	require.NoError(t, w.Run(ctx))
}

// failed_at is written as Laravel writes it, in the app's timezone (UTC
// here), whatever the database session's: a failure recorded by Go sits
// beside one Laravel's failer recorded, and queue:prune-failed --hours=1
// keeps both. Written in the session's timezone (CURRENT_TIMESTAMP in
// New York), Go's looked five hours old and was pruned.
func TestFailedJobsFailedAtInAppTimezone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := setupFailedJobs(t, ctx)
	b.run(t, ctx, "push.php", "1", "emails")
	b.failOnGo(t, ctx, "emails")
	out, err := b.command(ctx, "failed_time.php", "log", "emails").Output()
	require.NoError(t, err, "%s", out)
	fromPHP := strings.TrimSpace(string(out))

	list := func() map[string]time.Time {
		out, err := b.command(ctx, "failed_time.php", "list").Output()
		require.NoError(t, err, "%s", out)
		rows := map[string]time.Time{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			id, at, ok := strings.Cut(line, " ")
			require.True(t, ok, line)
			rows[id], err = time.Parse(time.DateTime, at)
			require.NoError(t, err, line)
		}
		return rows
	}
	rows := list()
	require.Len(t, rows, 2)
	var fromGo string
	for id := range rows {
		if id != fromPHP {
			fromGo = id
		}
	}
	skew := rows[fromGo].Sub(rows[fromPHP]).Abs()
	require.Less(t, skew, time.Hour, "Go's failed_at %v and Laravel's %v are in one timezone", rows[fromGo], rows[fromPHP])

	out, err = b.command(ctx, "failed_time.php", "prune", "1").Output()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "0", strings.TrimSpace(string(out)), "queue:prune-failed --hours=1 prunes nothing that failed just now")
	require.Len(t, list(), 2)
}

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// A payload without a uuid (not Laravel 8+'s) is recorded under a fresh
// uuid, which the recorded payload carries too, so that Laravel's
// queue:retry finds it and puts it back.
func TestFailedJobsRecordWithoutUUID(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := setupFailedJobs(t, ctx)
	b.run(t, ctx, "push.php", "1", "old")
	raw, err := b.q.Client().LPop(ctx, b.prefix+"queues:old").Result()
	require.NoError(t, err)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(raw), &fields))
	delete(fields, "uuid")
	old, err := json.Marshal(fields)
	require.NoError(t, err)
	require.NoError(t, b.q.Push(ctx, "old", old))
	b.failOnGo(t, ctx, "old")

	var uuid, payload string
	require.NoError(t, b.db.QueryRowContext(ctx, "SELECT uuid, payload FROM "+b.table).Scan(&uuid, &payload))
	require.Regexp(t, uuidShape, uuid)
	p, err := laravel.DecodePayload([]byte(payload))
	require.NoError(t, err)
	require.Equal(t, uuid, p.UUID, "the recorded payload carries the record's uuid")
	b.run(t, ctx, "failed.php", "retry", uuid)
	sizes, err := b.q.Sizes(ctx, "old")
	require.NoError(t, err)
	require.Equal(t, laravel.Sizes{Ready: 1}, sizes, "queue:retry put it back")
}
