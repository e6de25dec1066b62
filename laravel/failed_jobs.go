package laravel

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

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
	// queue:retry pushes the job back through; default "redis".
	Connection string
	// Placeholders is how the driver numbers its parameters: "$" for
	// PostgreSQL ($1, $2, ...), the default; "?" for MySQL and SQLite.
	Placeholders string
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

// insert is the statement that records one failure; failed_at is the
// database's clock, as the column's default (useCurrent) has it.
func (f *FailedJobs) insert() string {
	ps := make([]string, 5)
	for i := range ps {
		ps[i] = "?"
		if f.Placeholders == "$" {
			ps[i] = fmt.Sprintf("$%d", i+1)
		}
	}
	return "INSERT INTO " + f.Table + " (uuid, connection, queue, payload, exception, failed_at) VALUES (" +
		strings.Join(ps, ", ") + ", CURRENT_TIMESTAMP)"
}

// Record writes the failure of r, with its payload as Laravel pushed it
// (RedisJob::getRawBody, which Laravel's failer records too) and cause as
// its exception.
func (f *FailedJobs) Record(ctx context.Context, r *Reserved, cause error) error {
	payload := r.Raw
	if len(payload) == 0 {
		payload = r.Reserved
	}
	uuid := failedID(r)
	exception := "jobgen.laravel: " + cause.Error()
	if _, err := f.DB.ExecContext(ctx, f.insert(), uuid, f.Connection, r.Queue, string(payload), exception); err != nil {
		return fmt.Errorf("record failed job %s in %s: %w", uuid, f.Table, err)
	}
	return nil
}
