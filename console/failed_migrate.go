package console

import (
	"context"
	"errors"
	"fmt"
)

// failedTable is what failed:migrate needs of Command.Engine.FailedStore:
// a failedsql.Store is one.
type failedTable interface {
	DDL() string
	Migrate(ctx context.Context) error
	Table() string
}

var errNoFailedTable = errors.New("needs a failed store in SQL: set Command.Engine.FailedStore to a failedsql.Store (see docs/failures.md)")

var failedMigrateVerb = &verb{
	name:    "failed:migrate",
	summary: "Create the SQL table of failed jobs (EngineConfig.FailedStore)",
	maxArgs: 0,
	noRedis: true,
	about: `Create the PostgreSQL table that keeps failed jobs when
Command.Engine.FailedStore is a failedsql.Store (docs/failures.md), with
its index. Safe to run twice, and from two deploys at once. Print the DDL
with --print to add it to the application's migrations instead.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		print := new(bool)
		fs.boolVar(print, "print", false, "print the DDL and change nothing")
		return func(ctx context.Context, s *session) error {
			t, ok := s.c.Engine.FailedStore.(failedTable)
			if !ok {
				return errNoFailedTable
			}
			if *print {
				fmt.Fprint(s.out, t.DDL())
				return nil
			}
			if err := t.Migrate(ctx); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "Failed jobs table %s is ready.\n", t.Table())
			return nil
		}
	},
}
