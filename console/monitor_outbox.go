package console

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jobgen/jobgen/outbox"
)

// monitorOutbox prints the outbox's backlog and returns its alerts. With
// the outbox database (console.WithOutbox) it reads the table and the
// relays' passes from PostgreSQL (outbox.ReadHealth), so that a dead
// relay or a Redis outage shows; without it, what a relay last
// published to Redis, if one has.
func (s *session) monitorOutbox(ctx context.Context, maxAge, maxIdle time.Duration) ([]string, error) {
	if o := s.c.Outbox; o != nil && o.DB != nil {
		h, err := outbox.ReadHealth(ctx, o.DB, s.c.outboxTable())
		if err != nil {
			return nil, err
		}
		s.printHealth(h)
		return h.Problems(maxAge, maxIdle), nil
	}
	if maxIdle > 0 {
		return nil, usagef("--max-relay-idle reads the relays' passes from the outbox database: give it with console.WithOutbox (see docs/outbox.md)")
	}
	if s.ins == nil {
		return nil, nil
	}
	alert, err := s.monitorPublished(ctx, maxAge)
	if alert == "" {
		return nil, err
	}
	return []string{alert}, err
}

// printHealth prints what the database says of the outbox.
func (s *session) printHealth(h outbox.Health) {
	if h.Missing {
		fmt.Fprintf(s.out, "Outbox %s: the table does not exist.\n", h.Table)
		return
	}
	fmt.Fprintf(s.out, "Outbox %s: %d %s waiting", h.Table, h.Rows, plural(h.Rows, "row"))
	if h.Parked > 0 {
		fmt.Fprintf(s.out, " (%d parked: see its error column)", h.Parked)
	}
	if h.Rows > h.Parked {
		fmt.Fprintf(s.out, ", oldest %s", h.Oldest.Round(time.Millisecond))
	}
	switch {
	case h.NoRelaysTable:
		fmt.Fprint(s.out, "; relays' passes not recorded (no table: run outbox:migrate)")
	case !h.Passed:
		fmt.Fprint(s.out, "; no relay has completed a pass")
	default:
		fmt.Fprintf(s.out, "; last relay pass %s ago, %d %s live", h.SincePass.Round(time.Second), h.Live, plural(h.Live, "relay"))
	}
	fmt.Fprintln(s.out, " (read from PostgreSQL).")
}

// monitorPublished prints the outbox's backlog as a relay last
// published it to Redis, if one has, and returns an alert if it crosses
// maxAge (0: no check).
func (s *session) monitorPublished(ctx context.Context, maxAge time.Duration) (string, error) {
	b, ok, err := s.ins.Outbox(ctx)
	if err != nil || !ok {
		return "", err
	}
	now := time.Now()
	fmt.Fprintf(s.out, "Outbox %s: %d %s waiting", b.Table, b.Rows, plural(b.Rows, "row"))
	if b.Parked > 0 {
		fmt.Fprintf(s.out, " (%d parked: see its error column)", b.Parked)
	}
	if b.Rows > 0 {
		fmt.Fprintf(s.out, ", oldest %s", b.Age().Round(time.Millisecond))
	}
	fmt.Fprintf(s.out, "; read by a relay %s ago.\n", now.Sub(b.At).Round(time.Second))
	switch {
	case maxAge <= 0:
		return "", nil
	case b.Rows > b.Parked && now.Sub(b.At) > time.Minute:
		return fmt.Sprintf("outbox %s (%d rows, and no relay has reported for %s)", b.Table, b.Rows, now.Sub(b.At).Round(time.Second)), nil
	case b.Age() > maxAge:
		return fmt.Sprintf("outbox %s (oldest row waited %s, more than %s)", b.Table, b.Age().Round(time.Millisecond), maxAge), nil
	}
	return "", nil
}

// monitorWithoutRedis is queue:monitor when Redis cannot be reached:
// it still reads the outbox from PostgreSQL, where jobs committed during
// the outage wait, and fails with Redis's error and the outbox's alerts.
func (s *session) monitorWithoutRedis(ctx context.Context, maxAge, maxIdle time.Duration) error {
	fmt.Fprintf(s.out, "Redis: not reached: %s\n", oneLine(s.redisErr))
	alerts, err := s.monitorOutbox(ctx, maxAge, maxIdle)
	msg := "Redis not reached: " + oneLine(s.redisErr)
	if len(alerts) > 0 {
		msg += "; over threshold: " + strings.Join(alerts, ", ")
	}
	return errors.Join(errors.New(msg), err)
}
