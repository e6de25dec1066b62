package console

import (
	"context"
	"errors"

	"github.com/jobgen/jobgen/failedsql"
)

var errNoFailedTable = errors.New("needs a failed store in SQL: set Command.Engine.FailedStore to a failedsql.Store (see docs/failures.md)")

var failedMigrateVerb = &verb{
	name:    "failed:migrate",
	summary: "Create or migrate the SQL table of failed jobs (EngineConfig.FailedStore), up or down",
	maxArgs: 0,
	noRedis: true,
	about: `Bring the PostgreSQL table that keeps failed jobs when
Command.Engine.FailedStore is a failedsql.Store (docs/failures.md) to
the latest version of its schema, creating it if need be, or to --to N;
--down goes one version down, --to 0 drops it. The versions applied are
kept in <table>_migrations; a table made before versions existed is
version 1. A down that would drop failed jobs is refused unless
--force. Safe to run twice, and from two deploys at once (one
transaction under an advisory lock). --status lists the versions;
--print prints the DDL of every version, to add to the application's
migrations instead.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		f := declareMigrateFlags(fs)
		return func(ctx context.Context, s *session) error {
			t, ok := s.c.Engine.FailedStore.(*failedsql.Store)
			if !ok {
				return errNoFailedTable
			}
			return f.run(ctx, s, schemaOps{
				what:   "Failed jobs table " + t.Table(),
				latest: len(failedsql.Steps),
				ddl:    func() (string, error) { return t.DDL(), nil },
				ready:  func() error { return nil },
				status: func(ctx context.Context) ([]schemaVersion, int, error) {
					steps, at, err := t.Migrations(ctx)
					out := make([]schemaVersion, len(steps))
					for i, m := range steps {
						out[i] = schemaVersion{version: m.Version, name: m.Name, appliedAt: m.AppliedAt}
					}
					return out, at, err
				},
				migrate:   t.MigrateTo,
				wouldLose: failedsql.ErrWouldLose,
			})
		}
	},
}
