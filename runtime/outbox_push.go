package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/internal/outboxsql"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

var scriptOutboxPush = mustScript("outbox_push")

// RelayRow is one outbox row as a relay claimed it, for
// Engine.PushRelayed. Its fields are the table's columns
// (docs/outbox.md).
type RelayRow struct {
	// ID is the row's id column: the job's ID, or the batch's, or the
	// workflow's.
	ID string
	// Kind is the row's kind column: "job", "batch" for a row holding
	// a batch's record and its jobs, or "workflow" for a row holding a
	// workflow's plan.
	Kind string
	// Queue is the queue, or the partition, the row's job goes to.
	Queue string
	// Name is the job's name.
	Name string
	// Delay is what is left of the job's delay.
	Delay time.Duration
	// UniqueKey is the unique lock the job takes as it is pushed; empty
	// for none.
	UniqueKey string
	// UniqueFor is how long the unique lock is held.
	UniqueFor time.Duration
	// Payload is the job's envelope as DispatchTx encoded it, or for a
	// batch row, the batch's record and its jobs, or for a workflow row,
	// its plan.
	Payload []byte
}

// RelayMark is a mark in a queue's relayed set: the row's ID, or row
// ID/job ID for a job of a batch row. A relay releases a row's marks once
// the row is deleted (docs/outbox.md, "Exactly once").
type RelayMark struct {
	Queue, Mark string
}

// RelayOutcome is what Engine.PushRelayed made of one row.
type RelayOutcome struct {
	// Done reports that the row may be deleted: its jobs are in Redis,
	// pushed now or by a relay before, or it was a unique job dropped
	// because another job holds its lock.
	Done bool
	// Parked, when not empty, says why the row can never be pushed: the
	// relay sets its error column and leaves it. A row neither Done nor
	// Parked met an error that may pass, and stays as it was.
	Parked string
	// DroppedBy is the ID of the job holding the lock of a unique job
	// that was dropped, as Dispatch would refuse it with a
	// *DuplicateError.
	DroppedBy string
	// Marks are the marks of the row's jobs, pushed or found.
	Marks []RelayMark
}

// RelayResult is what Engine.PushRelayed did.
type RelayResult struct {
	// Rows holds an outcome per row, in the order of the rows given.
	Rows []RelayOutcome
	// Pushed counts the jobs pushed, batch jobs and the first steps of
	// the workflows created included.
	Pushed int64
	// Skipped counts the jobs whose mark was found: a relay pushed them
	// before, and died before it deleted their rows.
	Skipped int64
}

// PushRelayed pushes the jobs of outbox rows that a relay claimed, each
// under its mark, so that a job whose mark is there already is not
// pushed again; Redis refuses a push that would run after deadline
// (Redis's clock). It takes a unique job's lock (unless its mark is
// there) and drops a job whose lock another job holds, creates a batch
// row's batch unless it exists, creates a workflow row's workflow unless
// it exists and pushes its released steps not pushed yet, and emits
// JobQueued for each job it pushes. With EngineConfig.Replication, a push counts only once the
// replicas confirm it.
//
// It is the outbox relay's low-level step (package outbox, which
// deletes the rows that are done, parks the others and then releases
// the marks); DispatchTx and the relay are what applications use. The
// error joins those that may pass (Redis unreachable, a late push); the
// rows they touched are neither done nor parked, and the result is
// complete for the others.
func (e *Engine) PushRelayed(ctx context.Context, deadline time.Time, rows []RelayRow) (RelayResult, error) {
	res := RelayResult{Rows: make([]RelayOutcome, len(rows))}
	var jobs []relayPush
	var errs error
	for i, row := range rows {
		out := &res.Rows[i]
		switch row.Kind {
		case outboxsql.KindJob:
			ok, err := e.relayUnique(ctx, row, out)
			errs = errors.Join(errs, err)
			if ok {
				jobs = append(jobs, relayPush{row: out, name: row.Name, mark: row.ID, id: row.ID, queue: row.Queue,
					delay: row.Delay.Milliseconds(), payload: row.Payload})
			}
		case outboxsql.KindBatch:
			js, err := e.relayBatch(ctx, row, out)
			errs = errors.Join(errs, err)
			jobs = append(jobs, js...)
		case outboxsql.KindWorkflow:
			n, err := e.relayWorkflow(ctx, row, out, deadline)
			errs = errors.Join(errs, err)
			res.Pushed += n
		default:
			out.Parked = fmt.Sprintf("unknown outbox row kind %q", row.Kind)
		}
	}
	if len(jobs) == 0 {
		return res, errs
	}
	return res, errors.Join(errs, e.relaySend(ctx, &res, jobs, deadline.UnixMilli()))
}

// relayPush is one job to push, under its mark, for a row.
type relayPush struct {
	row                   *RelayOutcome
	name, mark, id, queue string
	delay                 int64
	payload               []byte
}

// relayUnique takes a unique job's lock, with its ID as owner, and
// reports whether to push it. A job whose mark is there was pushed
// already: its lock is not taken again, since the job may have run and
// released it. A job whose lock another job holds is dropped, as
// Dispatch refuses it.
func (e *Engine) relayUnique(ctx context.Context, row RelayRow, out *RelayOutcome) (bool, error) {
	if row.UniqueKey == "" {
		return true, nil
	}
	found, err := e.store.HasRelayedMark(ctx, row.Queue, row.ID)
	switch {
	case err != nil:
		return false, fmt.Errorf("outbox relay: job %s: read its mark: %w", row.ID, err)
	case found:
		return true, nil // pushed before: the push skips it
	}
	env := &Envelope{ID: row.ID, Name: row.Name, UniqueKey: row.UniqueKey}
	_, err = e.lockUnique(ctx, env, row.UniqueFor)
	var dup *DuplicateError
	switch {
	case errors.As(err, &dup):
		out.DroppedBy = dup.HolderID
		out.Done = true
		return false, nil
	case err != nil:
		return false, fmt.Errorf("outbox relay: %w", err)
	}
	return true, nil
}

// relayBatch creates a batch row's batch, unless it exists, and returns
// its jobs to push. The create's nonce is the batch's, so that a create
// made again by another relay finds it and changes nothing.
func (e *Engine) relayBatch(ctx context.Context, row RelayRow, out *RelayOutcome) ([]relayPush, error) {
	var rec outboxBatchRecord
	if err := msgpack.Unmarshal(row.Payload, &rec); err != nil {
		out.Parked = fmt.Sprintf("decode batch record: %v", err)
		return nil, nil
	}
	args := []any{"create", rec.Jobs, e.cfg.StateRetention.Milliseconds(), "outbox:" + row.ID}
	for _, f := range rec.Fields {
		args = append(args, f)
	}
	bk := e.keys.Batch(row.ID)
	if err := e.store.RunOne(ctx, call{Script: scriptBatchAdd, Keys: bk.All(), Args: args}).Err(); err != nil {
		if jobrdb.HasErrorPrefix(err, "WRONGTYPE") {
			out.Parked = "create batch: " + err.Error()
			return nil, nil
		}
		return nil, fmt.Errorf("outbox relay: create batch %s: %w", row.ID, err)
	}
	if err := e.indexBatch(ctx, row.ID); err != nil {
		return nil, fmt.Errorf("outbox relay: batch %s: %w", row.ID, err)
	}
	jobs := make([]relayPush, len(rec.Push))
	for i, p := range rec.Push {
		jobs[i] = relayPush{row: out, name: row.Name, mark: row.ID + "/" + p.ID, id: p.ID, queue: p.Queue, delay: p.Delay, payload: p.Payload}
	}
	return jobs, nil
}

// relayChunk is the most jobs one outbox_push call carries.
const relayChunk = jobrdb.MaxEnqueue

// relaySend pushes jobs through the outbox_push script, one call per
// queue and 500 jobs, in one pipeline, and records what each row's jobs
// came to.
func (e *Engine) relaySend(ctx context.Context, res *RelayResult, jobs []relayPush, deadline int64) error {
	return e.markedSend(ctx, res, jobs, deadline, e.keys.Relayed)
}

// markedSend is relaySend with the marks in the sets set names, by
// queue: keyspace's Relayed, or Retried for a retry from a failed store
// outside Redis (failed_backend.go).
func (e *Engine) markedSend(ctx context.Context, res *RelayResult, jobs []relayPush, deadline int64, set func(queue string) string) error {
	type group struct {
		queue string
		jobs  []relayPush
	}
	var groups []*group
	open := map[string]*group{}
	for _, j := range jobs {
		g := open[j.queue]
		if g == nil || len(g.jobs) >= relayChunk {
			if err := validateQueueOrPartition(j.queue); err != nil {
				j.row.Parked = err.Error()
				continue
			}
			g = &group{queue: j.queue}
			open[j.queue] = g
			groups = append(groups, g)
		}
		g.jobs = append(g.jobs, j)
	}
	calls := make([]call, len(groups))
	for i, g := range groups {
		if err := e.remember(ctx, g.queue); err != nil {
			return fmt.Errorf("outbox relay: %w", err)
		}
		step := jobrdb.Enqueue{Width: jobrdb.WidthEach, TagBound: MaxTagJobs}
		marks := make([]any, 0, 2+len(g.jobs))
		marks = append(marks, deadline, len(g.jobs))
		for k, j := range g.jobs {
			marks = append(marks, j.mark)
			group, tags := storedGroupAndTags(g.queue, j.id, j.payload)
			step.Add(j.id, j.payload, j.delay, group)
			// Tagged jobs are recorded under their monitored tags, as a
			// Dispatch records them.
			if len(tags) > 0 {
				if step.Tags == nil {
					step.Tags = make([][]string, len(g.jobs))
				}
				step.Tags[k] = tags
			}
		}
		calls[i] = e.enqueueCall(scriptOutboxPush, g.queue, &step, []string{set(g.queue)}, marks...)
	}
	// With Replication, a push counts only once WAIT has the replicas
	// confirm it: a row is deleted only after its job survives a failover.
	rep := e.cfg.Replication
	cmds, waitErrs := e.store.PushedReplies(ctx, calls, jobrdb.Replicas{N: rep.Replicas, Timeout: rep.Timeout})
	var errs error
	failed := map[*RelayOutcome]bool{}
	for i, g := range groups {
		reply, err := cmds[i].Slice()
		if err == nil && waitErrs != nil && waitErrs[i] != nil {
			err = waitErrs[i]
		}
		if err == nil && len(reply) != 3 {
			err = fmt.Errorf("unexpected reply %v", reply)
		}
		if err != nil {
			errs = errors.Join(errs, fmt.Errorf("outbox relay: push to %s: %w", g.queue, err))
			for _, j := range g.jobs {
				failed[j.row] = true
			}
			continue
		}
		e.relayTally(res, g.jobs, reply, failed)
	}
	for _, j := range jobs {
		if !failed[j.row] && j.row.Parked == "" {
			j.row.Done = true
		}
	}
	return errs
}

// relayTally reads one push call's reply: the jobs it pushed, skipped
// and refused.
func (e *Engine) relayTally(res *RelayResult, jobs []relayPush, reply []any, failed map[*RelayOutcome]bool) {
	skipped := map[string]bool{}
	for _, m := range asStrings(reply[1]) {
		skipped[m] = true
	}
	for _, m := range asStrings(reply[2]) {
		for _, j := range jobs {
			if j.mark == m {
				j.row.Parked = "job ID " + j.id + " is taken in queue " + j.queue + " by a job with another payload"
				failed[j.row] = true
			}
		}
	}
	res.Pushed += jobrdb.Int(reply[0])
	res.Skipped += int64(len(skipped))
	for _, j := range jobs {
		if failed[j.row] {
			continue
		}
		j.row.Marks = append(j.row.Marks, RelayMark{j.queue, j.mark})
		if !skipped[j.mark] && !e.events.empty() {
			e.events.emit(Event{Kind: JobQueued, Queue: e.logicalQueue(j.queue), Name: j.name, ID: j.id, Delay: time.Duration(j.delay) * time.Millisecond})
		}
	}
}

func asStrings(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
