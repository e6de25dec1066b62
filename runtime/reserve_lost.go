package runtime

import (
	"context"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Lost reserves are the reserve calls of an engine whose reply was
// lost (Engine.lost, internal/lostcalls): the call failed (an error, a
// timeout, a broken connection) after Redis may have run it, so jobs may
// be reserved under its token that no caller holds. Each is made again,
// with its token, before the engine's next reserve: reserve.lua then
// hands back what the first run took (its calls record), and the engine
// gives those jobs back, their attempt uncounted (unreserve.lua).
// docs/faults.md, "A lost reply of a reserve", has the argument.

// noteLost keeps r, a reserve call that failed with err, for recovery;
// not when Redis replied with an error, as then the reply was not lost.
// Without calls records (EngineConfig.RetryWindow off) a second run
// would take new jobs rather than hand back the first run's, so nothing
// is kept.
func (e *Engine) noteLost(r jobrdb.Reserve, err error) {
	if e.retryWindow() <= 0 || jobrdb.IsReply(err) {
		return
	}
	e.lost.Add(r)
}

// recoverLost makes each lost reserve call again and gives back the jobs
// it reserved. A call that fails again is kept for the next reserve,
// until its calls record may have expired (RetryWindow after it was
// made): a run after that would take new jobs, so it is dropped, and
// its jobs, if any, wait for their lease as before. It returns how many
// jobs it gave back.
func (e *Engine) recoverLost(ctx context.Context) int {
	given := e.lost.Recover(e.cfg.RetryWindow, func(r jobrdb.Reserve) (int, error) { return e.giveBackLost(ctx, r) })
	if given > 0 {
		e.cfg.Logger.Info("jobgen: gave back jobs reserved by a call whose reply was lost", "jobs", given)
	}
	return given
}

// giveBackLost runs r again: with its token, reserve.lua takes nothing
// new and returns the jobs the first run reserved, while their lease
// lasts. It gives them back, uncounted, and returns how many.
func (e *Engine) giveBackLost(ctx context.Context, r jobrdb.Reserve) (int, error) {
	got, err := e.store.Reserve(ctx, r)
	if err != nil {
		return 0, err
	}
	b := e.reserveResult(r, got)
	refs := make([]Ref, 0, len(b.Jobs))
	for _, j := range b.Jobs {
		// A job whose state entry was malformed is left to its lease: it
		// is failed by whoever reserves it next, counted or not.
		if j.Err == nil {
			refs = append(refs, j.Ref)
		}
	}
	if len(refs) == 0 {
		return 0, nil
	}
	if err := e.unreserve(ctx, refs...); err != nil {
		return 0, err
	}
	return len(refs), nil
}
