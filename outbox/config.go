package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Notifier wakes a relay when rows may have been committed to the outbox:
// the pgx module's listener waits on LISTEN. Without one a relay polls.
type Notifier interface {
	// Wait returns nil once a notification has arrived since the last
	// call returned, at once if one has; ctx's error when ctx ends first;
	// or the error that broke the listener.
	Wait(ctx context.Context) error
}

// RelayConfig configures a Relay.
type RelayConfig struct {
	// DB is the PostgreSQL database holding the outbox. Required. While
	// claims come back full, Run holds two transactions at once (a pass
	// settling while the next claims), so give it two connections or
	// more; with one it works, one pass at a time.
	DB *sql.DB
	// Wake, if set, wakes the relay when a transaction that wrote to the
	// outbox commits (pgxoutbox.Listen). DispatchTx notifies at most once
	// every runtime.OutboxNotifyEvery per process; the relay, once woken,
	// keeps claiming every Cooldown for Hold, which finds the rows of the
	// transactions that did not notify. The relay still polls every Poll.
	Wake Notifier
	// Poll is how often the relay looks at the table without being woken:
	// no committed row waits longer (docs/outbox.md, "Waking the relay").
	// Default 1s with Wake, 100ms without.
	Poll time.Duration
	// Cooldown is the wait between two looks at the table while the relay
	// is hot: for Hold after a wake or after a claim that found rows. A
	// look while hot is one cheap read (is a row waiting?) before the
	// claim. Default 5ms, or Poll if shorter; at most Poll.
	Cooldown time.Duration
	// Hold is how long the relay stays hot after a wake or a claim that
	// found rows. A row whose transaction committed within Hold minus
	// runtime.OutboxNotifyEvery of writing it waits at most about Cooldown
	// once a transaction of its process that notified has committed.
	// Default 1s; at least Cooldown.
	Hold time.Duration
	// Batch is the most rows one claim takes. Default 500, at most 5000.
	Batch int
	// Connections are the engines of the named connections whose rows the
	// relay pushes too; the relay's own engine takes the rows of the
	// default connection (""). Rows of other connections are left for a
	// relay that serves them.
	Connections map[string]*runtime.Engine
	// Lease bounds the time from a claim to the push of its rows: a push
	// that would run later is refused by Redis, and the claim is let go.
	// The relay's transaction ends after twice that idle, so that a
	// stalled relay's rows go to another. Default 30s.
	Lease time.Duration
	// Logger receives the relay's errors, and a line for each job it
	// drops or parks. Default slog.Default().
	Logger *slog.Logger
}

func (c *RelayConfig) setDefaults() {
	if c.Poll == 0 {
		c.Poll = 100 * time.Millisecond
		if c.Wake != nil {
			c.Poll = time.Second
		}
	}
	if c.Batch == 0 {
		c.Batch = 500
	}
	if c.Cooldown == 0 {
		c.Cooldown = min(5*time.Millisecond, c.Poll)
	}
	if c.Hold == 0 {
		c.Hold = max(time.Second, c.Cooldown)
	}
	if c.Lease == 0 {
		c.Lease = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

func (c *RelayConfig) validate() error {
	switch {
	case c.DB == nil:
		return fmt.Errorf("%w: RelayConfig.DB is required", runtime.ErrInvalid)
	case c.Batch < 1 || c.Batch > 5000:
		return fmt.Errorf("%w: RelayConfig.Batch (%d) must be between 1 and 5000", runtime.ErrInvalid, c.Batch)
	case c.Poll < time.Millisecond:
		return fmt.Errorf("%w: RelayConfig.Poll (%v) must be at least 1ms", runtime.ErrInvalid, c.Poll)
	case c.Cooldown < 0 || c.Cooldown > c.Poll:
		return fmt.Errorf("%w: RelayConfig.Cooldown (%v) must be between 0 and Poll (%v)", runtime.ErrInvalid, c.Cooldown, c.Poll)
	case c.Hold < c.Cooldown:
		return fmt.Errorf("%w: RelayConfig.Hold (%v) must be at least Cooldown (%v)", runtime.ErrInvalid, c.Hold, c.Cooldown)
	case c.Lease < time.Second:
		return fmt.Errorf("%w: RelayConfig.Lease (%v) must be at least 1s", runtime.ErrInvalid, c.Lease)
	}
	return nil
}
