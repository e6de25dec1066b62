package console

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// Outbox is the application's PostgreSQL outbox (docs/outbox.md), for
// outbox:migrate, queue:relay and queue:work --relay. Its table is
// Command.Engine.OutboxTable, or runtime.DefaultOutboxTable.
type Outbox struct {
	// DB is the database holding the outbox table. sql.Open connects
	// lazily, so a program can set it up front.
	DB *sql.DB
	// Listen, if set, returns what wakes the relay as transactions that
	// wrote to the outbox commit, for the table named: pgxoutbox.Listen
	// over a pool. Without it the relay polls (--poll).
	Listen func(ctx context.Context, table string) (outbox.Notifier, error)
}

// WithOutbox sets Command.Outbox.
func WithOutbox(o Outbox) Option {
	return func(c *Command) { c.Outbox = &o }
}

var errNoOutbox = errors.New("needs the application's outbox database: pass it with console.WithOutbox(console.Outbox{DB: db}) (see docs/outbox.md)")

var outboxMigrateVerb = &verb{
	name:    "outbox:migrate",
	summary: "Create or migrate the outbox table, up or down",
	maxArgs: 0,
	noRedis: true,
	about: `Bring the PostgreSQL outbox table that DispatchTx writes to (named by
EngineConfig.OutboxTable, default jobgen_outbox) to the latest version
of its schema, creating it if need be, or to --to N; --down goes one
version down, --to 0 drops it all. The versions applied are kept in
<table>_migrations; a table made before versions existed is version 1.
A down that would drop rows (jobs waiting, completions) is refused
unless --force. Safe to run twice, and from two deploys at once (one
transaction under an advisory lock). --status lists the versions;
--print prints the DDL of every version, to add to the application's
migrations instead.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		f := declareMigrateFlags(fs)
		return func(ctx context.Context, s *session) error {
			table := s.c.outboxTable()
			return f.run(ctx, s, schemaOps{
				what:   "Outbox table " + table,
				latest: runtime.OutboxSchemaVersion,
				ddl:    func() (string, error) { return runtime.OutboxDDL(table) },
				ready: func() error {
					if s.c.Outbox == nil || s.c.Outbox.DB == nil {
						return errNoOutbox
					}
					return nil
				},
				status: func(ctx context.Context) ([]schemaVersion, int, error) {
					steps, at, err := runtime.OutboxMigrations(ctx, s.c.Outbox.DB, table)
					out := make([]schemaVersion, len(steps))
					for i, m := range steps {
						out[i] = schemaVersion{version: m.Version, name: m.Name, appliedAt: m.AppliedAt}
					}
					return out, at, err
				},
				migrate: func(ctx context.Context, to int, force bool) (int, error) {
					return runtime.MigrateOutboxTo(ctx, s.c.Outbox.DB, table, to, force)
				},
				wouldLose: runtime.ErrOutboxWouldLose,
			})
		}
	},
}

var relayVerb = &verb{
	name:    "queue:relay",
	summary: "Move jobs committed to the outbox to Redis, until stopped",
	maxArgs: 0,
	about: `Run an outbox relay: claim the rows that committed transactions wrote
with DispatchTx, push their jobs to Redis, each exactly once, and delete
the rows. It wakes as transactions commit (console.Outbox.Listen) and
polls besides. Several relays may run at once. SIGTERM or Ctrl-C stops
it after the claim in hand. queue:work --relay runs one inside a worker.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		rc := relayFlags(fs)
		return func(ctx context.Context, s *session) error {
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
			defer stop()
			log := slog.New(newHumanHandler(s.out))
			fmt.Fprintf(s.out, "Relaying outbox %s to Redis; Ctrl-C stops.\n", s.c.outboxTable())
			return s.runRelay(ctx, *rc, log)
		}
	},
}

// relayFlags declares the relay's flags.
func relayFlags(fs *flags) *outbox.RelayConfig {
	rc := &outbox.RelayConfig{}
	fs.intVar(&rc.Batch, "relay-batch", 0, "rows a relay claims at once", "500")
	fs.durationVar(&rc.Poll, "poll", "how often the relay looks at the table without a notification", "1s, or 100ms without Listen")
	return rc
}

// runRelay runs a relay with cfg until ctx ends.
func (s *session) runRelay(ctx context.Context, cfg outbox.RelayConfig, log *slog.Logger) error {
	o := s.c.Outbox
	if o == nil || o.DB == nil {
		return errNoOutbox
	}
	cfg.DB, cfg.Logger = o.DB, log
	if o.Listen != nil {
		wake, err := o.Listen(ctx, s.c.outboxTable())
		if err != nil {
			return fmt.Errorf("listen for the outbox: %w", err)
		}
		if c, ok := wake.(interface{ Close() }); ok {
			defer c.Close()
		}
		cfg.Wake = wake
	}
	r, err := outbox.NewRelay(s.engine, cfg)
	if err != nil {
		return err
	}
	return r.Run(ctx)
}

// startRelay runs a relay beside queue:work, and returns what stops it
// and waits for it.
func (s *session) startRelay(ctx context.Context, cfg outbox.RelayConfig, log *slog.Logger) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.runRelay(ctx, cfg, log) }()
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return errors.New("the outbox relay did not stop within 30s")
		}
	}
}

func (c *Command) outboxTable() string {
	if c.Engine.OutboxTable != "" {
		return c.Engine.OutboxTable
	}
	return runtime.DefaultOutboxTable
}
