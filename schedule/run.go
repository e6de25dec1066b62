package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jobgen/jobgen/internal/keyspace"
	"github.com/jobgen/jobgen/internal/rdb"
	"github.com/jobgen/jobgen/runtime"
)

// Config configures the processes that run a Schedule.
type Config struct {
	// Clock gives the time ticks are read against, and the waits between
	// them. Default: the Redis server's clock (TIME), read at each pass,
	// so that processes on hosts whose clocks differ agree on when a
	// tick is due.
	Clock Clock
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

func (c *Config) setDefaults(e *runtime.Engine) {
	if c.Clock == nil {
		c.Clock = redisClock{storeOf(e)}
	}
	if c.Grace <= 0 {
		c.Grace = time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Clock is where a schedule run reads the time and waits; tests give
// one they move by hand.
type Clock interface {
	Now(ctx context.Context) (time.Time, error)
	After(d time.Duration) <-chan time.Time
}

// redisClock reads the Redis server's clock and waits with timers.
type redisClock struct{ store *rdb.Store }

func (c redisClock) Now(ctx context.Context) (time.Time, error) { return c.store.Time(ctx) }

func (redisClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// storeOf is e's Redis, through the data layer.
func storeOf(e *runtime.Engine) *rdb.Store {
	return rdb.New(e.Client(), keyspace.New(e.Config().Prefix))
}

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
	// of its own (JobOptions.UniqueFor) it is not, and is tried again at
	// the next pass while it is the entry's latest tick.
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
func (s *Schedule) Run(ctx context.Context, e *runtime.Engine, cfg Config) error {
	r, err := s.runner(e, &cfg)
	if err != nil {
		return err
	}
	return r.run(ctx)
}

// RunDue makes one pass (the schedule:run command, for a system cron
// that starts it every minute): it dispatches every tick that is due
// now and not dispatched yet, as Run would at that moment, and returns
// what each try did.
func (s *Schedule) RunDue(ctx context.Context, e *runtime.Engine, cfg Config) ([]TickReport, error) {
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
	r.start(now.Add(-cfg.Grace))
	return reports, r.pass(ctx, now)
}

// runner builds the loop (loop.go) around fireTick.
func (s *Schedule) runner(e *runtime.Engine, cfg *Config) (*runner, error) {
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	cfg.setDefaults(e)
	byName := make(map[string]*Entry, len(entries))
	list := make([]loopEntry, len(entries))
	for i, en := range entries {
		byName[en.EntryName()] = en
		list[i] = loopEntry{Name: en.EntryName(), spec: en.spec, Missed: en.missed}
	}
	log, onTick := cfg.Logger, cfg.OnTick
	return newRunner(loopConfig{
		Entries: list,
		Clock:   cfg.Clock,
		Grace:   cfg.Grace,
		Fire: func(ctx context.Context, t loopTick) (outcome, error) {
			en := byName[t.Entry.Name]
			rep := fireTick(ctx, e, en, t)
			if onTick != nil {
				onTick(rep)
			}
			switch rep.Outcome {
			case TickDispatched:
				return outFired, nil
			case TickTaken:
				return outTaken, nil
			case TickOverlapping:
				if en.overlap > 0 {
					return outOverlapping, nil
				}
				return outHeld, nil
			case TickTooOld:
				return outTooOld, nil
			case TickPaused:
				return outPaused, nil
			}
			log.Error("scheduled dispatch failed; the next pass tries again", "entry", rep.Entry, "tick", rep.Tick, "err", rep.Err)
			return outHeld, rep.Err
		},
		Report: func(t loopTick, _ outcome, err error) {
			if t.Entry.Name == "" && err != nil {
				log.Error("schedule: reading the clock failed", "err", err)
			}
		},
	})
}

// engineFor returns the engine an entry dispatches on: e, or the one
// registered for the entry's connection (runtime.SetConnection).
func engineFor(ctx context.Context, e *runtime.Engine, en *Entry) (*runtime.Engine, error) {
	conn := en.connection
	if conn == "" {
		conn = en.job.JobOptions().Connection
	}
	if conn == "" {
		return e, nil
	}
	d, err := runtime.DispatcherFor(ctx, conn)
	if err != nil {
		return nil, err
	}
	eng, ok := d.(*runtime.Engine)
	if !ok {
		return nil, fmt.Errorf("%w: schedule entry %q: connection %q is a %T, not an *Engine", runtime.ErrInvalid, en.EntryName(), en.connection, d)
	}
	return eng, nil
}

// dispatch is the job of one dispatch of en, with the entry's options.
func (en *Entry) dispatch() *runtime.PendingDispatch {
	p := runtime.NewPendingDispatch(en.job)
	if en.queue != "" {
		p.OnQueue(en.queue)
	}
	if en.connection != "" {
		p.OnConnection(en.connection)
	}
	if en.delaySet {
		p.Delay(en.delay)
	}
	return p
}

// push is what runtime's Engine.PushTick needs of a dispatch of en at
// tick t (zero: now, outside its ticks).
func (en *Entry) push(t loopTick) runtime.TickPush {
	return runtime.TickPush{Entry: en.EntryName(), Job: en.dispatch(), At: t.At, Next: t.Next, Since: t.Since, Overlap: en.overlap}
}

// fireTick claims tick t of en and pushes its job, in one script call
// (Engine.PushTick).
func fireTick(ctx context.Context, e *runtime.Engine, en *Entry, t loopTick) TickReport {
	rep := TickReport{Entry: en.EntryName(), Tick: t.At, Outcome: TickFailed}
	eng, err := engineFor(ctx, e, en)
	if err != nil {
		rep.Err = fmt.Errorf("schedule %q: %w", rep.Entry, err)
		return rep
	}
	res, err := eng.PushTick(ctx, en.push(t))
	var dup *runtime.DuplicateError
	switch {
	case errors.As(err, &dup):
		// The job type's own unique lock: the tick is not claimed.
		rep.Outcome, rep.JobID = TickOverlapping, dup.HolderID
		return rep
	case err != nil:
		rep.Err = fmt.Errorf("schedule %q: %w", rep.Entry, err)
		return rep
	}
	rep.JobID = res.JobID
	switch res.Claim {
	case runtime.ClaimPushed:
		rep.Outcome = TickDispatched
	case runtime.ClaimLocked:
		rep.Outcome = TickOverlapping
	case runtime.ClaimPaused:
		rep.Outcome = TickPaused
	case runtime.ClaimTooOld:
		rep.Outcome = TickTooOld
	default:
		rep.Outcome = TickTaken
	}
	return rep
}

// DispatchNow dispatches the job of the entry named name now, with the
// entry's options, outside its ticks (the schedule:test command). An
// entry WithoutOverlapping takes its lock, and returns a
// *runtime.DuplicateError while its last run is queued or running. A
// paused entry (PauseEntry) is dispatched all the same: this is an
// operator's explicit request, and it leaves the entry paused.
func (s *Schedule) DispatchNow(ctx context.Context, e *runtime.Engine, name string) (string, error) {
	en, err := s.lookup(name)
	if err != nil {
		return "", err
	}
	eng, err := engineFor(ctx, e, en)
	if err != nil {
		return "", err
	}
	res, err := eng.PushTick(ctx, en.push(loopTick{}))
	if err != nil {
		return "", err
	}
	return res.JobID, nil
}
