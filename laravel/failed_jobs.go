package laravel

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// FailedJobs is a Laravel application's failed_jobs table, as Laravel's
// database-uuid failer (DatabaseUuidFailedJobProvider, the default since
// Laravel 8) keeps it: uuid, connection, queue, payload, exception,
// failed_at. A worker given one (WorkerConfig.FailedJobs) writes its
// failures there, with the payload as Laravel pushed it, so that php
// artisan queue:failed lists them and queue:retry puts them back for
// either kind of worker.
type FailedJobs struct {
	// DB is the application's database (config/database.php), through
	// any database/sql driver: PostgreSQL, MySQL or SQLite.
	DB *sql.DB
	// Table is the table's name; default "failed_jobs" (config/queue.php,
	// failed.table).
	Table string
	// Connection is the queue connection's name in config/queue.php, which
	// queue:retry pushes the job back through; default "redis". It must
	// be the app's name for its Redis connection: with another, Laravel's
	// queue:retry fails with "The [redis] queue connection has not been
	// configured" (jobgen laravel:doctor --failed-connection checks it).
	Connection string
	// Placeholders is how the driver numbers its parameters: "$" for
	// PostgreSQL ($1, $2, ...), the default; "?" for MySQL and SQLite.
	Placeholders string
	// Timezone is the app's timezone (config/app.php, timezone), in
	// which Laravel writes failed_at (Date::now(), a wall-clock time with
	// no zone) and queue:prune-failed compares it; default UTC, as
	// Laravel's. The database session's own timezone plays no part.
	Timezone *time.Location
}

var sqlName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

func (f *FailedJobs) setDefaults() {
	if f.Table == "" {
		f.Table = "failed_jobs"
	}
	if f.Connection == "" {
		f.Connection = "redis"
	}
	if f.Placeholders == "" {
		f.Placeholders = "$"
	}
	if f.Timezone == nil {
		f.Timezone = time.UTC
	}
}

func (f *FailedJobs) validate() error {
	switch {
	case f.DB == nil:
		return fmt.Errorf("%w: laravel.FailedJobs.DB is required", runtime.ErrInvalid)
	case !sqlName.MatchString(f.Table):
		return fmt.Errorf("%w: laravel.FailedJobs.Table %q must be a plain SQL name", runtime.ErrInvalid, f.Table)
	case f.Placeholders != "$" && f.Placeholders != "?":
		return fmt.Errorf(`%w: laravel.FailedJobs.Placeholders %q must be "$" or "?"`, runtime.ErrInvalid, f.Placeholders)
	}
	return nil
}

// insert is the statement that records one failure.
func (f *FailedJobs) insert() string {
	ps := make([]string, 6)
	for i := range ps {
		ps[i] = "?"
		if f.Placeholders == "$" {
			ps[i] = fmt.Sprintf("$%d", i+1)
		}
	}
	return "INSERT INTO " + f.Table + " (uuid, connection, queue, payload, exception, failed_at) VALUES (" +
		strings.Join(ps, ", ") + ")"
}

// failedAt is now as Laravel's failer writes failed_at: Date::now() in
// the app's timezone, formatted by the query grammar (Y-m-d H:i:s).
func (f *FailedJobs) failedAt(now time.Time) string {
	tz := f.Timezone
	if tz == nil {
		tz = time.UTC
	}
	return now.In(tz).Format(time.DateTime)
}

// Record writes the failure of r, with its payload as Laravel pushed it
// (RedisJob::getRawBody, which Laravel's failer records too) and cause as
// its exception. Laravel's failer takes the record's uuid from the
// payload; a payload without one (a producer other than Laravel 8+'s)
// is given a fresh one, in the record and in the payload recorded, so
// that queue:retry finds it and Laravel's failer can record it again.
func (f *FailedJobs) Record(ctx context.Context, r *Reserved, cause error) error {
	payload := r.Raw
	if len(payload) == 0 {
		payload = r.Reserved
	}
	uuid := r.Payload.UUID
	if uuid == "" {
		uuid = uuid4()
		var err error
		if payload, err = withUUID(payload, uuid); err != nil {
			return fmt.Errorf("record failed job in %s: %w", f.Table, err)
		}
	}
	exception := "jobgen.laravel: " + cause.Error()
	if _, err := f.DB.ExecContext(ctx, f.insert(), uuid, f.Connection, r.Queue, string(payload), exception, f.failedAt(time.Now())); err != nil {
		return fmt.Errorf("record failed job %s in %s: %w", uuid, f.Table, err)
	}
	return nil
}

// withUUID returns payload, a JSON object, with its uuid set to uuid.
func withUUID(payload []byte, uuid string) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(payload, &fields); err != nil {
		return nil, fmt.Errorf("payload is not a JSON object: %w", err)
	}
	fields["uuid"], _ = json.Marshal(uuid)
	return json.Marshal(fields)
}
