package runtime

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

var scriptScheduleTick = mustScript("schedule_tick")

// TickPush is one dispatch of a schedule entry's job, for
// Engine.PushTick.
type TickPush struct {
	// Entry is the entry's name: the key of its state in Redis, its job's
	// tag "schedule:NAME", and what picks the partition of a partitioned
	// queue (TickPartition). No { or }.
	Entry string
	// Job is the entry's job with the entry's queue, connection and
	// delay set on it. A debounced dispatch is refused.
	Job *PendingDispatch
	// At is the tick, which the push claims in the entry's state; the
	// zero time dispatches the job outside the entry's ticks, as an
	// operator's "run now": nothing is claimed, and a lock another job
	// holds is a *DuplicateError.
	At time.Time
	// Next is the entry's tick after At: its state is kept
	// EngineConfig.StateRetention after it.
	Next time.Time
	// Since is when the schedule's run started: the tick of an entry that
	// has no state yet is not claimed if it is before Since
	// (ClaimTooOld).
	Since time.Time
	// Overlap, when positive, makes the job take the entry's own lock
	// (without overlapping), held for at most Overlap, in place of the
	// job type's unique lock: a tick while it is held is claimed and
	// pushes nothing (ClaimLocked).
	Overlap time.Duration
}

// TickClaim is what Engine.PushTick made of a tick.
type TickClaim int

const (
	// ClaimPushed: the tick is claimed and its job pushed.
	ClaimPushed TickClaim = iota + 1
	// ClaimTaken: the tick, or a later one of the entry, was claimed
	// already; nothing was pushed.
	ClaimTaken
	// ClaimLocked: the tick is claimed, and nothing was pushed, as the
	// job of the entry's last run holds its lock (TickPush.Overlap).
	ClaimLocked
	// ClaimPaused: the tick is claimed, and nothing was pushed, as the
	// entry is paused.
	ClaimPaused
	// ClaimTooOld: the entry has no state and the tick is before
	// TickPush.Since; nothing was claimed or pushed.
	ClaimTooOld
)

// TickResult is what Engine.PushTick did.
type TickResult struct {
	Claim TickClaim
	// JobID is the job pushed (ClaimPushed), the job of the entry's last
	// claim (ClaimTaken), or the job that holds the entry's lock
	// (ClaimLocked).
	JobID string
}

// PushTick claims tick t.At of a schedule entry and pushes its job, in
// one script call, so that the tick is claimed once in all however many
// processes run the schedule, and its job pushed by the claim that won.
// The job is built as Dispatch builds it (sealed if encrypted, with its
// group), tagged "schedule:NAME" and "tick:UNIXMS", and goes to the
// partition TickPartition picks. A job type that is unique of its own
// takes its lock first: while another job holds it, nothing is claimed
// and the error is a *DuplicateError. With a zero t.At, the job is
// pushed outside the entry's ticks (schedule:test).
//
// It is the low-level step of package schedule, which decides which
// ticks are due; applications declare and run a schedule with that
// package.
func (e *Engine) PushTick(ctx context.Context, t TickPush) (TickResult, error) {
	if t.Job == nil || t.Entry == "" || strings.ContainsAny(t.Entry, "{}") {
		return TickResult{}, fmt.Errorf("%w: PushTick: a tick needs a job and an entry name without { or }", ErrInvalid)
	}
	if t.Job.hasAt() {
		return TickResult{}, fmt.Errorf("%w: schedule entry %s: its job has At(t): each tick of a schedule runs at its own time; At is for one dispatch", ErrInvalid, t.Entry)
	}
	env, q, err := e.tickEnvelope(t)
	if err != nil {
		return TickResult{}, err
	}
	if t.At.IsZero() {
		return e.pushEntryNow(ctx, t, env)
	}
	tick := t.At.UnixMilli()
	env.Tags = append(env.Tags, "tick:"+strconv.FormatInt(tick, 10))
	keys := []string{e.keys.Schedule(q, t.Entry)}
	var lockTTL int64
	undo := func() {}
	switch {
	case t.Overlap > 0:
		keys = append(keys, e.keys.Unique(env.UniqueKey))
		lockTTL = max(t.Overlap.Milliseconds(), 1)
	case env.UniqueKey != "":
		// The job's own unique lock is in a slot of its own: take it
		// first, and give it back if the tick is not ours.
		undo, err = e.lockUnique(ctx, env, t.Job.Job().JobOptions().UniqueFor)
		if err != nil {
			return TickResult{}, err
		}
	}
	res, err := e.claimTick(ctx, t, env, q, keys, lockTTL)
	if err != nil || res.Claim != ClaimPushed {
		undo()
	}
	return res, err
}

// claimTick runs schedule_tick.lua for env, the job of tick t.
func (e *Engine) claimTick(ctx context.Context, t TickPush, env *Envelope, q string, keys []string, lockTTL int64) (TickResult, error) {
	b, err := e.encodeStored(env, q, time.Now().UnixMilli())
	if err != nil {
		return TickResult{}, err
	}
	if err := e.remember(ctx, env.Queue); err != nil {
		return TickResult{}, err
	}
	keep := e.cfg.StateRetention
	if !t.Next.IsZero() {
		keep += t.Next.Sub(t.At)
	}
	delay := t.Job.DelayDuration()
	step := jobrdb.Enqueue{Width: jobrdb.WidthEach, Tags: oneJobTags(env.Tags), TagBound: MaxTagJobs}
	step.Add(env.ID, b, delayMillis(delay), env.groupArg())
	locked := "0"
	if len(keys) > 1 {
		locked = "1"
	}
	c := e.enqueueCall(scriptScheduleTick, q, &step, keys, t.At.UnixMilli(), t.Since.UnixMilli(), keep.Milliseconds(), lockTTL, locked)
	reply, err := e.store.RunOne(ctx, c).Slice()
	if err == nil && len(reply) != 2 {
		err = fmt.Errorf("unexpected reply %v", reply)
	}
	if err != nil {
		return TickResult{}, fmt.Errorf("claim tick %v: %w", t.At, err)
	}
	res := TickResult{}
	res.JobID, _ = reply[1].(string)
	switch jobrdb.Int(reply[0]) {
	case 1:
		res.Claim = ClaimPushed
		e.events.emit(Event{Kind: JobQueued, Queue: env.Queue, Name: env.Name, ID: env.ID, Delay: delay})
	case 2:
		res.Claim = ClaimLocked
	case 3:
		res.Claim = ClaimPaused
	case -1:
		res.Claim = ClaimTooOld
	default:
		res.Claim = ClaimTaken
	}
	return res, nil
}

// pushEntryNow pushes env, the job of entry t, outside its ticks: it
// takes the entry's lock (t.Overlap) or the job's own, and pushes.
func (e *Engine) pushEntryNow(ctx context.Context, t TickPush, env *Envelope) (TickResult, error) {
	ttl := t.Job.Job().JobOptions().UniqueFor
	if t.Overlap > 0 {
		ttl = t.Overlap
	}
	undo, err := e.lockUnique(ctx, env, ttl)
	if err != nil {
		return TickResult{}, err
	}
	if err := e.PushMany(ctx, []Outgoing{{Envelope: env, Delay: t.Job.DelayDuration()}}); err != nil {
		undo()
		return TickResult{}, fmt.Errorf("dispatch %s: %w", env.Name, err)
	}
	return TickResult{Claim: ClaimPushed, JobID: env.ID}, nil
}

// tickEnvelope builds the envelope of a dispatch of entry t, and the
// partition it goes to.
func (e *Engine) tickEnvelope(t TickPush) (*Envelope, string, error) {
	env, err := t.Job.envelope(e.seal)
	if err != nil {
		return nil, "", err
	}
	env.Tags = append(slices.Clip(env.Tags), "schedule:"+t.Entry)
	q := e.TickPartition(env.Queue, t.Entry)
	if t.Overlap > 0 {
		env.UniqueKey, env.UniqueUntilProcessing = scheduleLockKey(q, t.Entry), false
	}
	return env, q, nil
}

// TickPartition returns the partition of queue that the jobs and state
// of the schedule entry named entry go to: queue itself, unless
// EngineConfig.Partitions splits it; then one picked by the entry's
// name, the same in every engine so configured, so that the claim of a
// tick and the push of its job are one call on a Redis Cluster too.
// Package schedule reads and pauses an entry's state there.
func (e *Engine) TickPartition(queue, entry string) string { return e.partitionFor(queue, entry) }

// scheduleLockKey is the unique key of the lock of an entry without
// overlapping, in the slot of its queue (see keys.unique).
func scheduleLockKey(queue, name string) string { return "{" + queue + "}:schedule:" + name }
