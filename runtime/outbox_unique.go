package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/internal/outboxsql"
)

// outboxUniqueCheck bounds the read of the unique locks that DispatchTx
// makes before it writes unique jobs: past it, or with Redis down, the
// rows are written, and the relay meets the lock as it pushes.
const outboxUniqueCheck = time.Second

// heldLocks returns, for each unique row of rows whose lock a job holds
// in Redis now, its index and the holder's ID ("" if the lock does not
// name it), as Dispatch would refuse them. A Redis that does not answer
// within outboxUniqueCheck holds nothing here: the check is a courtesy
// to the caller, and the relay takes the lock itself when it pushes.
func (e *Engine) heldLocks(ctx context.Context, rows []outboxsql.Row) map[int]string {
	var idx []int
	var keys []string
	for i, r := range rows {
		if r.UniqueKey != "" {
			idx = append(idx, i)
			keys = append(keys, e.keys.Unique(r.UniqueKey))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, outboxUniqueCheck)
	defer cancel()
	vals, err := e.store.Values(ctx, keys)
	if err != nil {
		return nil
	}
	var held map[int]string
	for j, v := range vals {
		if v.Found {
			if held == nil {
				held = map[int]string{}
			}
			held[idx[j]] = v.Value
		}
	}
	return held
}

// insertUnique writes rows into tx's outbox, but for the unique ones
// whose key a job holds, in Redis or waiting in the outbox, and returns
// a *DuplicateError for each of those (nil for the rows written), or nil
// if every row was written.
func (e *Engine) insertUnique(ctx context.Context, tx Tx, rows []outboxsql.Row) ([]error, error) {
	held := e.heldLocks(ctx, rows)
	write := rows
	var at []int // at[j] is the index in rows of write[j]
	if len(held) > 0 {
		write = make([]outboxsql.Row, 0, len(rows)-len(held))
		for i, r := range rows {
			if _, ok := held[i]; !ok {
				write = append(write, r)
				at = append(at, i)
			}
		}
	}
	dup, err := outboxsql.Insert(ctx, tx, e.outboxTable(), write)
	if err != nil {
		return nil, err
	}
	if len(dup) < len(write) {
		if err := e.wakeRelays(ctx, tx); err != nil {
			return nil, fmt.Errorf("wake the outbox relays: %w", err)
		}
	}
	if len(held) == 0 && len(dup) == 0 {
		return nil, nil
	}
	errs := make([]error, len(rows))
	for i, holder := range held {
		errs[i] = &DuplicateError{Name: rows[i].Name, Key: rows[i].UniqueKey, HolderID: holder}
	}
	for _, j := range dup {
		i := j
		if at != nil {
			i = at[j]
		}
		r := rows[i]
		holder := ""
		if q, ok := tx.(outboxsql.Querier); ok {
			holder, _ = outboxsql.Holder(ctx, q, e.outboxTable(), r.Connection, r.UniqueKey)
		}
		errs[i] = &DuplicateError{Name: r.Name, Key: r.UniqueKey, HolderID: holder}
	}
	return errs, nil
}
