package outbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jobgen/jobgen/internal/outboxsql"
	"github.com/jobgen/jobgen/runtime"
)

// release starts the countdown of the marks of deleted rows. A failure
// leaves them for Reconcile.
func (r *Relay) release(ctx context.Context, c *conn, rows []*relayRow) {
	byQueue := map[string][]string{}
	for _, row := range rows {
		if !row.Done {
			continue
		}
		for _, m := range row.Marks {
			byQueue[m.Queue] = append(byQueue[m.Queue], m.Mark)
		}
	}
	r.releaseMarks(ctx, c, byQueue)
}

// releaseMarks releases each queue's marks, even once ctx has ended: the
// rows are gone, and a mark left pending waits for Reconcile.
func (r *Relay) releaseMarks(ctx context.Context, c *conn, byQueue map[string][]string) int64 {
	n, err := c.store.ReleaseMarks(context.WithoutCancel(ctx), r.grace(), byQueue)
	if err != nil {
		r.cfg.Logger.Warn("outbox relay: release marks", "err", err)
	}
	return n
}

// grace is how long a released mark stays, in ms: past the deadline of
// any relay that claimed its row before, with room for the Redis clocks
// of a cluster's masters to differ.
func (r *Relay) grace() int64 { return 2*r.cfg.Lease.Milliseconds() + time.Minute.Milliseconds() }

// Reconcile lets the marks of deleted rows expire where the relay that
// pushed them died before it could: marks pending for more than a minute
// whose rows are gone. It returns how many it let go.
func (r *Relay) Reconcile(ctx context.Context) (int, error) {
	total := 0
	for _, c := range r.conns {
		n, err := r.reconcile(ctx, c)
		total += n
		if err != nil {
			return total, err
		}
	}
	r.stats.reconciled.Add(int64(total))
	return total, nil
}

func (r *Relay) reconcile(ctx context.Context, c *conn) (int, error) {
	now, err := c.store.Time(ctx)
	if err != nil {
		return 0, err
	}
	queues, err := c.store.Queues(ctx)
	if err != nil {
		return 0, err
	}
	before := now.UnixMilli() - time.Minute.Milliseconds()
	parts := c.e.Config().Partitions
	total := 0
	for _, lq := range queues {
		for _, q := range runtime.PartitionNames(lq, parts[lq]) {
			marks, err := c.store.PendingMarks(ctx, q, before, 1000)
			if err != nil || len(marks) == 0 {
				continue
			}
			gone, err := r.gone(ctx, marks)
			if err != nil {
				return total, err
			}
			if len(gone) > 0 {
				total += int(r.releaseMarks(ctx, c, map[string][]string{q: gone}))
			}
		}
	}
	return total, nil
}

// gone returns the marks whose rows are not in the table.
func (r *Relay) gone(ctx context.Context, marks []string) ([]string, error) {
	ids := make([]string, len(marks))
	for i, m := range marks {
		id, _, _ := strings.Cut(m, "/")
		ids[i] = id
	}
	rs, err := r.cfg.DB.QueryContext(ctx, outboxsql.Present(r.table, ids))
	if err != nil {
		return nil, fmt.Errorf("outbox relay: reconcile: %w", err)
	}
	defer rs.Close()
	present := map[string]bool{}
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		present[id] = true
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	var gone []string
	for _, m := range marks {
		id, _, _ := strings.Cut(m, "/")
		if !present[id] {
			gone = append(gone, m)
		}
	}
	return gone, nil
}
