package runtime

import (
	"context"
	"errors"
	"fmt"
	jobrdb "github.com/jobgen/jobgen/internal/rdb"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/jobgen/jobgen/internal/schedule"
)

// ScheduleConfig configures the processes that run a Schedule.
type ScheduleConfig struct {
	// Clock gives the time ticks are read against, and the waits between
	// them. Default: the Redis server's clock (TIME), read at each pass,
	// so that processes on hosts whose clocks differ agree on when a
	// tick is due.
	Clock ScheduleClock
	// Grace is how late a tick may be dispatched and still be on time,
	// for entries that skip missed ticks (SkipMissed); and how long
	// before its start a process dispatches the tick of an entry that
	// has no state in Redis yet (a new one). Default 1 minute.
	Grace time.Duration
	// Logger receives errors of dispatches. Default slog.Default().
	Logger *slog.Logger
	// OnTick, if set, receives what each try of a tick did, in the
	// goroutine of the run.
	OnTick func(TickReport)
}

func (c *ScheduleConfig) setDefaults(e *Engine) {
	if c.Clock == nil {
		c.Clock = redisClock{e.store}
	}
	if c.Grace <= 0 {
		c.Grace = time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// ScheduleClock is where a schedule run reads the time and waits; tests
// give one they move by hand.
type ScheduleClock interface {
	Now(ctx context.Context) (time.Time, error)
	After(d time.Duration) <-chan time.Time
}

// redisClock reads the Redis server's clock and waits with timers.
type redisClock struct{ store *jobrdb.Store }

func (c redisClock) Now(ctx context.Context) (time.Time, error) { return c.store.Time(ctx) }

func (redisClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// TickOutcome is what one try of a tick did.
type TickOutcome int

const (
	// TickDispatched: this process claimed the tick and pushed its job.
	TickDispatched TickOutcome = iota + 1
	// TickTaken: the tick, or a later one of the entry, was claimed
	// already, by this process or another; nothing was pushed.
	TickTaken
	// TickOverlapping: the job of the entry's last run is still queued or
	// running, so nothing was pushed. For an entry WithoutOverlapping the
	// tick is claimed (it counts as run); for a job type that is unique
	// of its own (UniqueFor) it is not, and is tried again at the next
	// pass while it is the entry's latest tick.
	TickOverlapping
	// TickTooOld: the entry has no state in Redis (it is new, or its state
	// expired) and the tick is older than the process: not one it missed.
	TickTooOld
	// TickFailed: the try failed (TickReport.Err); the next pass tries
	// again while the tick is the entry's latest.
	TickFailed
	// TickPaused: the entry is paused (Schedule.PauseEntry): the tick is
	// claimed, so it counts as run, and nothing was pushed.
	TickPaused
)

func (o TickOutcome) String() string {
	switch o {
	case TickDispatched:
		return "dispatched"
	case TickTaken:
		return "taken"
	case TickOverlapping:
		return "overlapping"
	case TickTooOld:
		return "too old"
	case TickFailed:
		return "failed"
	case TickPaused:
		return "paused"
	}
	return "TickOutcome(" + strconv.Itoa(int(o)) + ")"
}

// TickReport is what one try of one tick did.
type TickReport struct {
	Entry   string
	Tick    time.Time
	Outcome TickOutcome
	// JobID is the job pushed (TickDispatched), the job of the last claim
	// (TickTaken) or the job still running (TickOverlapping).
	JobID string
	Err   error
}

// Run runs the schedule on e until ctx is done, then returns nil (the
// schedule:work command). It dispatches each tick of each entry as it
// falls due, sleeping in between; many processes may run it at once, and
// each tick is dispatched once in all. An error of one dispatch is
// logged and tried again at the next pass, while that tick is still the
// entry's latest. The entries are checked first: an entry that is wrong
// is an error, and nothing runs.
//
// A process that comes back after every process was down dispatches, per
// entry, the last tick it missed (CatchUp(n): the last n; SkipMissed:
// none). An entry that has no state yet is dispatched from its first
// tick after the process started (less Grace) on.
func (s *Schedule) Run(ctx context.Context, e *Engine, cfg ScheduleConfig) error {
	r, err := s.runner(e, &cfg)
	if err != nil {
		return err
	}
	return r.Run(ctx)
}

// RunDue makes one pass (the schedule:run command, for a system cron
// that starts it every minute): it dispatches every tick that is due
// now and not dispatched yet, as Run would at that moment, and returns
// what each try did.
func (s *Schedule) RunDue(ctx context.Context, e *Engine, cfg ScheduleConfig) ([]TickReport, error) {
	var reports []TickReport
	onTick := cfg.OnTick
	cfg.OnTick = func(r TickReport) {
		reports = append(reports, r)
		if onTick != nil {
			onTick(r)
		}
	}
	r, err := s.runner(e, &cfg)
	if err != nil {
		return nil, err
	}
	now, err := cfg.Clock.Now(ctx)
	if err != nil {
		return nil, fmt.Errorf("schedule: read the clock: %w", err)
	}
	r.Start(now.Add(-cfg.Grace))
	return reports, r.Pass(ctx, now)
}

// runner builds the loop of internal/schedule around e.fireTick.
func (s *Schedule) runner(e *Engine, cfg *ScheduleConfig) (*schedule.Runner, error) {
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	cfg.setDefaults(e)
	byName := make(map[string]*ScheduledEntry, len(entries))
	list := make([]schedule.Entry, len(entries))
	for i, en := range entries {
		byName[en.EntryName()] = en
		list[i] = schedule.Entry{Name: en.EntryName(), Spec: en.spec, Missed: en.missed}
	}
	clock := cfg.Clock
	grace, log, onTick := cfg.Grace, cfg.Logger, cfg.OnTick
	r, err := schedule.NewRunner(schedule.Config{
		Entries: list,
		Clock:   clock,
		Grace:   grace,
		Fire: func(ctx context.Context, t schedule.Tick) (schedule.Outcome, error) {
			en := byName[t.Entry.Name]
			rep := e.fireTick(ctx, en, t)
			if onTick != nil {
				onTick(rep)
			}
			switch rep.Outcome {
			case TickDispatched:
				return schedule.Fired, nil
			case TickTaken:
				return schedule.Taken, nil
			case TickOverlapping:
				if en.overlap > 0 {
					return schedule.Overlapping, nil
				}
				return schedule.Held, nil
			case TickTooOld:
				return schedule.TooOld, nil
			case TickPaused:
				return schedule.Paused, nil
			}
			log.Error("scheduled dispatch failed; the next pass tries again", "entry", rep.Entry, "tick", rep.Tick, "err", rep.Err)
			return schedule.Held, rep.Err
		},
		Report: func(t schedule.Tick, _ schedule.Outcome, err error) {
			if t.Entry.Name == "" && err != nil {
				log.Error("schedule: reading the clock failed", "err", err)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// scheduleLockKey is the unique key of the lock of an entry without
// overlapping, in the slot of its queue (see keys.unique).
func scheduleLockKey(queue, name string) string { return "{" + queue + "}:schedule:" + name }

// engineFor returns the engine an entry dispatches on.
func (e *Engine) engineFor(ctx context.Context, en *ScheduledEntry) (*Engine, error) {
	conn := cmpOr(en.connection, en.job.JobOptions().Connection)
	if conn == "" {
		return e, nil
	}
	d, err := DispatcherFor(ctx, conn)
	if err != nil {
		return nil, err
	}
	eng, ok := d.(*Engine)
	if !ok {
		return nil, fmt.Errorf("%w: schedule entry %q: connection %q is a %T, not an *Engine", ErrInvalid, en.EntryName(), en.connection, d)
	}
	return eng, nil
}

// entryEnvelope builds the envelope of one dispatch of en, and the
// physical queue it goes to.
func (e *Engine) entryEnvelope(en *ScheduledEntry) (*Envelope, string, error) {
	p := NewPendingDispatch(en.job)
	if en.queue != "" {
		p.OnQueue(en.queue)
	}
	if en.connection != "" {
		p.OnConnection(en.connection)
	}
	env, err := p.envelope(e.seal)
	if err != nil {
		return nil, "", err
	}
	name := en.EntryName()
	env.Tags = append(slices.Clip(env.Tags), "schedule:"+name)
	q := e.partitionFor(env.Queue, name) // by the entry: its state stays on one partition
	if en.overlap > 0 {
		env.UniqueKey, env.UniqueUntilProcessing = scheduleLockKey(q, name), false
	}
	return env, q, nil
}

// entryDelay is the delay of en's jobs.
func entryDelay(en *ScheduledEntry) time.Duration {
	if en.delaySet {
		return en.delay
	}
	return en.job.JobOptions().Delay
}

// fireTick claims tick t of en and pushes its job, in one script call
// (schedule_tick.lua).
func (e *Engine) fireTick(ctx context.Context, en *ScheduledEntry, t schedule.Tick) TickReport {
	rep := TickReport{Entry: en.EntryName(), Tick: t.At, Outcome: TickFailed}
	fail := func(err error) TickReport {
		rep.Err = fmt.Errorf("schedule %q: %w", rep.Entry, err)
		return rep
	}
	eng, err := e.engineFor(ctx, en)
	if err != nil {
		return fail(err)
	}
	env, q, err := eng.entryEnvelope(en)
	if err != nil {
		return fail(err)
	}
	tick := t.At.UnixMilli()
	env.Tags = append(env.Tags, "tick:"+strconv.FormatInt(tick, 10))
	keys := []string{eng.keys.Schedule(q, rep.Entry)}
	var lockTTL int64
	undo := func() {}
	switch {
	case en.overlap > 0:
		keys = append(keys, eng.keys.Unique(env.UniqueKey))
		lockTTL = max(en.overlap.Milliseconds(), 1)
	case env.UniqueKey != "":
		// The job's own unique lock is in a slot of its own: take it
		// first, and give it back if the tick is not ours.
		undo, err = eng.lockUnique(ctx, env, en.job.JobOptions().UniqueFor)
		var dup *DuplicateError
		if errors.As(err, &dup) {
			rep.Outcome, rep.JobID = TickOverlapping, dup.HolderID
			return rep
		}
		if err != nil {
			return fail(err)
		}
	}
	b, err := eng.encodeStored(env, q, time.Now().UnixMilli())
	if err != nil {
		undo()
		return fail(err)
	}
	if err := eng.remember(ctx, env.Queue); err != nil {
		undo()
		return fail(err)
	}
	keep := eng.cfg.StateRetention
	if !t.Next.IsZero() {
		keep += t.Next.Sub(t.At)
	}
	delay := entryDelay(en)
	step := jobrdb.Enqueue{Queue: eng.keys.Queue(q), Width: jobrdb.WidthEach}
	cg := env.groupArg()
	step.Add(env.ID, b, delayMillis(delay), cg)
	if cg != "" {
		eng.grouped.add(q)
	}
	locked := "0"
	if len(keys) > 1 {
		locked = "1"
	}
	c := call{Script: scriptScheduleTick, Keys: step.Keys(keys...), Args: step.Args(tick, t.Since.UnixMilli(), keep.Milliseconds(), lockTTL, locked)}
	reply, err := eng.store.RunOne(ctx, c).Slice()
	if err == nil && len(reply) != 2 {
		err = fmt.Errorf("unexpected reply %v", reply)
	}
	if err != nil {
		undo()
		return fail(fmt.Errorf("claim tick %v: %w", t.At, err))
	}
	rep.JobID, _ = reply[1].(string)
	switch asInt(reply[0]) {
	case 1:
		rep.Outcome = TickDispatched
		eng.events.emit(Event{Kind: JobQueued, Queue: env.Queue, Name: env.Name, ID: env.ID, Delay: delay})
		return rep
	case 2:
		rep.Outcome = TickOverlapping
	case 3:
		rep.Outcome = TickPaused
	case -1:
		rep.Outcome = TickTooOld
	default:
		rep.Outcome = TickTaken
	}
	undo()
	return rep
}

// DispatchNow dispatches the job of the entry named name now, with the
// entry's options, outside its ticks (the schedule:test command). An
// entry WithoutOverlapping takes its lock, and returns a
// *DuplicateError while its last run is queued or running. A paused
// entry (Pause) is dispatched all the same: this is an operator's
// explicit request, and it leaves the entry paused.
func (s *Schedule) DispatchNow(ctx context.Context, e *Engine, name string) (string, error) {
	en, err := s.lookup(name)
	if err != nil {
		return "", err
	}
	eng, err := e.engineFor(ctx, en)
	if err != nil {
		return "", err
	}
	env, _, err := eng.entryEnvelope(en)
	if err != nil {
		return "", err
	}
	ttl := en.job.JobOptions().UniqueFor
	if en.overlap > 0 {
		ttl = en.overlap
	}
	undo, err := eng.lockUnique(ctx, env, ttl)
	if err != nil {
		return "", err
	}
	if err := eng.PushMany(ctx, []Outgoing{{Envelope: env, Delay: entryDelay(en)}}); err != nil {
		undo()
		return "", fmt.Errorf("dispatch %s: %w", env.Name, err)
	}
	return env.ID, nil
}

// EntryStatus is an entry of a schedule as schedule:list shows it.
type EntryStatus struct {
	Name string
	// Spec is the cron expression with its zone, or "@every d".
	Spec  string
	Queue string
	// Next is the entry's next tick after the Redis clock's now, in its
	// zone.
	Next time.Time
	// LastTick is the last tick claimed, in the entry's zone; zero if
	// none is remembered. LastRun is when the last job was pushed (Redis
	// clock), and LastJobID that job. Skipped is set when the last tick
	// pushed nothing: SkippedFor names the job of the entry's last run,
	// still queued or running (WithoutOverlapping), or is empty when the
	// entry was paused.
	LastTick   time.Time
	LastRun    time.Time
	LastJobID  string
	Skipped    bool
	SkippedFor string
	// Paused is set while the entry is paused (Pause): its ticks push
	// nothing.
	Paused bool
}

// Status returns the entries of the schedule with their next tick and
// what their last one did, as kept in e's Redis.
func (s *Schedule) Status(ctx context.Context, e *Engine) ([]EntryStatus, error) {
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	now, err := e.store.Time(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]EntryStatus, len(entries))
	for i, en := range entries {
		eng, err := e.engineFor(ctx, en)
		if err != nil {
			return nil, err
		}
		env, q, err := eng.entryEnvelope(en)
		if err != nil {
			return nil, err
		}
		st := EntryStatus{Name: en.EntryName(), Spec: en.Spec(), Queue: env.Queue, Next: en.Next(now)}
		h, err := eng.store.Hash(ctx, eng.keys.Schedule(q, st.Name))
		if err != nil {
			return nil, err
		}
		inZone := func(ms string) time.Time {
			n, _ := strconv.ParseInt(ms, 10, 64)
			t := msTime(n)
			if en.loc != nil && !t.IsZero() {
				t = t.In(en.loc)
			}
			return t
		}
		st.LastTick, st.LastRun, st.LastJobID = inZone(h["tick"]), inZone(h["at"]), h["id"]
		if h["skipped_at"] != "" || h["skipped_by"] != "" {
			st.Skipped, st.SkippedFor = true, h["skipped_by"]
		}
		st.Paused = h["paused"] != ""
		out[i] = st
	}
	return out, nil
}
