package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/jobgen/jobgen/internal/outboxsql"
)

// passEvery is how often, at most, a relay records a completed pass in
// the relays table.
const passEvery = time.Second

// liveness is a relay's record of its completed passes, in the outbox
// table's relays table (outboxsql.Relays): in PostgreSQL, so that a
// relay that cannot reach Redis, and so completes no pass, shows as
// stopped where the backlog itself is read.
type liveness struct {
	id      string
	next    time.Time // the earliest time of the next write
	lastErr string
	forgot  bool
}

func newLiveness() liveness {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return liveness{id: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))}
}

// passed records that the relay completed a pass, at most once every
// passEvery; a failure is logged once until a write succeeds again.
func (r *Relay) passed(ctx context.Context) {
	l := &r.live
	now := time.Now()
	if now.Before(l.next) {
		return
	}
	l.next = now.Add(passEvery)
	if !l.forgot {
		if _, err := r.cfg.DB.ExecContext(ctx, outboxsql.Forget(r.table)); err == nil {
			l.forgot = true
		}
	}
	_, err := r.cfg.DB.ExecContext(ctx, outboxsql.Pass(r.table), l.id, r.stats.relayed.Load())
	switch {
	case err != nil && ctx.Err() == nil:
		if msg := err.Error(); msg != l.lastErr {
			r.cfg.Logger.Error("outbox relay: record a pass in "+outboxsql.Relays(r.table)+
				"; queue:monitor will report this relay as stopped (run outbox:migrate to create the table)",
				"relay", l.id, "err", err)
			l.lastErr = msg
		}
	case err == nil:
		l.lastErr = ""
	}
}
