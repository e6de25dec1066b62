package console

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The flags and the run shared by outbox:migrate and failed:migrate:
// both move a versioned schema (internal/sqlmigrate) up or down.

// migrateFlags are the flags of a migrate command.
type migrateFlags struct {
	print, status, down, force bool
	to                         int
}

func declareMigrateFlags(fs *flags) *migrateFlags {
	f := &migrateFlags{}
	fs.boolVar(&f.print, "print", false, "print the DDL of every version and change nothing")
	fs.boolVar(&f.status, "status", false, "list the versions, and which are applied, and change nothing")
	fs.intVar(&f.to, "to", -1, "the version to migrate to, up or down; 0 drops the tables", "the latest")
	fs.boolVar(&f.down, "down", false, "go one version down")
	fs.boolVar(&f.force, "force", false, "run a down even if it drops rows")
	return f
}

// schemaVersion is one version of a schema, as the status lists it.
type schemaVersion struct {
	version   int
	name      string
	appliedAt time.Time
}

// schemaOps is what a migrate command runs on its schema.
type schemaOps struct {
	// what names the table in the output: "Outbox table jobgen_outbox".
	what   string
	latest int
	ddl    func() (string, error)
	// ready says the database is there, or why not.
	ready     func() error
	status    func(ctx context.Context) ([]schemaVersion, int, error)
	migrate   func(ctx context.Context, to int, force bool) (int, error)
	wouldLose error
}

func (f *migrateFlags) run(ctx context.Context, s *session, o schemaOps) error {
	if f.print {
		ddl, err := o.ddl()
		if err != nil {
			return err
		}
		fmt.Fprint(s.out, ddl)
		return nil
	}
	if err := o.ready(); err != nil {
		return err
	}
	if f.down && f.to >= 0 {
		return errors.New("--down and --to: give one")
	}
	steps, at, err := o.status(ctx)
	if err != nil {
		return err
	}
	if f.status {
		fmt.Fprintf(s.out, "%s is at version %d of %d.\n", o.what, at, len(steps))
		for _, m := range steps {
			when := "pending"
			switch {
			case !m.appliedAt.IsZero():
				when = "applied " + m.appliedAt.UTC().Format(time.RFC3339)
			case m.version <= at:
				when = "applied before versions were recorded"
			}
			fmt.Fprintf(s.out, "  %d  %-45s %s\n", m.version, m.name, when)
		}
		return nil
	}
	target := f.to
	switch {
	case f.down:
		target = max(at-1, 0)
	case target < 0:
		target = o.latest
	}
	from, err := o.migrate(ctx, target, f.force)
	if errors.Is(err, o.wouldLose) {
		return fmt.Errorf("%w (--force runs it anyway)", err)
	}
	if err != nil {
		return err
	}
	if from == target {
		fmt.Fprintf(s.out, "%s is at version %d; nothing to do.\n", o.what, target)
		return nil
	}
	fmt.Fprintf(s.out, "%s migrated from version %d to %d.\n", o.what, from, target)
	return nil
}
