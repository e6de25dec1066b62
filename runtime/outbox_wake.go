package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobgen/jobgen/internal/outboxsql"
)

// OutboxNotifyEvery is how often, at most, the DispatchTx calls of one
// process wake the relays of one outbox table: the first transaction to
// write rows after the interval has passed runs pg_notify, and the
// others in the interval do not. PostgreSQL commits one notifying
// transaction at a time, a WAL flush each, so a notify in every
// transaction would put every dispatching commit in one line. A relay
// once woken keeps claiming while rows come (outbox.RelayConfig.Hold),
// which finds the rows of the transactions that did not notify
// (docs/outbox.md, "Waking the relay").
const OutboxNotifyEvery = 5 * time.Millisecond

// outboxNotified holds, by outbox table, the time (Unix ns) this process
// last ran the notify in a transaction.
var outboxNotified sync.Map // string -> *atomic.Int64

// wakeRelays runs the outbox's notify in tx, unless this process ran it
// for the table less than OutboxNotifyEvery ago. A notify that fails
// gives its turn back, so that the next transaction notifies.
func (e *Engine) wakeRelays(ctx context.Context, tx Tx) error {
	table := e.outboxTable()
	v, ok := outboxNotified.Load(table)
	if !ok {
		v, _ = outboxNotified.LoadOrStore(table, new(atomic.Int64))
	}
	last := v.(*atomic.Int64)
	now := time.Now().UnixNano()
	prev := last.Load()
	if now-prev < int64(OutboxNotifyEvery) || !last.CompareAndSwap(prev, now) {
		return nil
	}
	if _, err := tx.ExecContext(ctx, outboxsql.Notify(table)); err != nil {
		last.CompareAndSwap(now, prev)
		return err
	}
	return nil
}
