package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// compDrivers dispatch one round of a cell's jobs through each path of
// jobopt.Paths, and return the IDs the path returns ("" where it returns
// none). Each job carries the cell's options; a driver whose path sets
// an option another way (PendingMany's OnQueue, say) moves it there.
var compDrivers = map[string]func(c *compCell, jobs []compJob) ([]string, error){
	"Dispatch": func(c *compCell, jobs []compJob) ([]string, error) {
		return each(jobs, func(j compJob) (string, error) { return c.pending(j).Dispatch(c.ctx) })
	},
	"DispatchMany": func(c *compCell, jobs []compJob) ([]string, error) {
		return runtime.DispatchMany(c.ctx, jobs)
	},
	"PendingMany": func(c *compCell, jobs []compJob) ([]string, error) {
		o := jobs[0].opts
		for i := range jobs {
			jobs[i].opts.Queue, jobs[i].opts.Connection, jobs[i].opts.Delay = "", "", 0
		}
		p := runtime.NewPendingMany(jobs).OnQueue(o.Queue)
		if o.Connection != "" {
			p.OnConnection(o.Connection)
		}
		if o.Delay != 0 {
			p.Delay(o.Delay)
		}
		if !c.at.IsZero() {
			p.At(c.at)
		}
		return p.Dispatch(c.ctx)
	},
	"PushMany": func(c *compCell, jobs []compJob) ([]string, error) {
		out := make([]runtime.Outgoing, len(jobs))
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			p := runtime.NewPendingDispatch(j)
			env, err := p.Envelope()
			if err != nil {
				return nil, err
			}
			out[i], ids[i] = runtime.Outgoing{Envelope: env, Delay: p.DelayDuration(), At: c.at}, env.ID
		}
		return ids, c.main.PushMany(c.ctx, out)
	},
	"PushRaw": func(c *compCell, jobs []compJob) ([]string, error) {
		return each(jobs, func(j compJob) (string, error) {
			body, err := j.EncodeJob()
			if err != nil {
				return "", err
			}
			return runtime.PushRaw(c.ctx, j.opts.Queue, j.JobName(), body)
		})
	},
	"DispatchTx": func(c *compCell, jobs []compJob) ([]string, error) {
		var ids []string
		return ids, c.inTx(func(tx runtime.Tx) (err error) {
			ids, err = each(jobs, func(j compJob) (string, error) { return c.pending(j).DispatchTx(c.ctx, tx) })
			return err
		})
	},
	"DispatchManyTx": func(c *compCell, jobs []compJob) ([]string, error) {
		var ids []string
		return ids, c.inTx(func(tx runtime.Tx) (err error) {
			if !c.at.IsZero() {
				ids, err = runtime.NewPendingMany(jobs).At(c.at).DispatchTx(c.ctx, tx)
				return err
			}
			ids, err = runtime.DispatchManyTx(c.ctx, tx, jobs)
			return err
		})
	},
	"ChainLink": func(c *compCell, jobs []compJob) ([]string, error) {
		return each(jobs, func(j compJob) (string, error) {
			first := compJob{Cell: j.Cell, N: j.N, Link: 1, opts: runtime.JobOptions{Queue: c.queue}}
			_, err := runtime.Chain(first, c.pending(j)).Dispatch(c.ctx)
			return "", err
		})
	},
	"Batch": func(c *compCell, jobs []compJob) ([]string, error) {
		batch := make([]runtime.Job, len(jobs))
		for i, j := range jobs {
			batch[i] = c.pending(j)
		}
		_, err := runtime.NewBatch(batch...).Dispatch(c.ctx)
		return make([]string, len(jobs)), err
	},
	"Schedule": func(c *compCell, jobs []compJob) ([]string, error) {
		s := schedule.New()
		for _, j := range jobs {
			s.Job(c.pending(j)).Name(fmt.Sprintf("%s/%d", c.queue, j.N))
		}
		reports, err := s.RunDue(c.ctx, c.main, schedule.Config{Clock: compClock{time.Now().UTC().Truncate(time.Minute)}, Logger: quiet})
		var errs []error
		ids := make([]string, 0, len(jobs))
		for _, r := range reports {
			switch {
			case r.Err != nil:
				errs = append(errs, r.Err)
			case r.Outcome != schedule.TickDispatched:
				errs = append(errs, fmt.Errorf("tick of %s: %v", r.Entry, r.Outcome))
			}
			ids = append(ids, r.JobID)
		}
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		if err == nil && len(reports) != len(jobs) {
			err = fmt.Errorf("%d ticks for %d entries", len(reports), len(jobs))
		}
		return ids, err
	},
	"Listener": func(c *compCell, jobs []compJob) ([]string, error) {
		return each(jobs, func(j compJob) (string, error) {
			compListenerMu.Lock()
			defer compListenerMu.Unlock()
			compListenerOpts = j.opts
			defer func() { compListenerOpts = runtime.JobOptions{} }()
			e := compEvent{Job: j}
			return "", runtime.Fire(c.ctx, e, runtime.QueuedListener[compListener](e))
		})
	},
	"Debounced": func(c *compCell, jobs []compJob) ([]string, error) {
		return each(jobs, func(j compJob) (string, error) {
			return c.pending(j).Debounce(j.Key, c.window).Dispatch(c.ctx)
		})
	},
	// Each job is a step of a workflow, after a first step of its own
	// (Link 1, on the cell's queue with no other option), whose success
	// releases it: the worker that ran the first step pushes it.
	"WorkflowStep": func(c *compCell, jobs []compJob) ([]string, error) {
		wf := runtime.NewWorkflow()
		for _, j := range jobs {
			first := runtime.AddStep(wf, compJob{Cell: j.Cell, N: j.N, Link: 1, opts: runtime.JobOptions{Queue: c.queue}})
			runtime.AddStep(wf, c.pending(j), runtime.After(first))
		}
		id, err := wf.Dispatch(c.ctx)
		if err != nil {
			return nil, err
		}
		c.workflows = append(c.workflows, id)
		return make([]string, len(jobs)), nil
	},
	// The jobs are dispatched, fail their first run, and are retried
	// from the failed store (compCell.run); the retry is what the cell
	// looks at.
	"FailedRetry": func(c *compCell, jobs []compJob) ([]string, error) {
		return each(jobs, func(j compJob) (string, error) { return c.pending(j).Dispatch(c.ctx) })
	},
	// As FailedRetry, with the failed store in PostgreSQL: the cell's
	// engines have EngineConfig.FailedStore (compBackend.mainSQL).
	"FailedRetrySQL": func(c *compCell, jobs []compJob) ([]string, error) {
		return each(jobs, func(j compJob) (string, error) { return c.pending(j).Dispatch(c.ctx) })
	},
}

// pending starts a dispatch of j, with At(c.at) for a row with At.
func (c *compCell) pending(j compJob) *runtime.PendingDispatch {
	p := runtime.NewPendingDispatch(j)
	if !c.at.IsZero() {
		p.At(c.at)
	}
	return p
}

// each dispatches the jobs one at a time, and returns their IDs.
func each(jobs []compJob, dispatch func(compJob) (string, error)) ([]string, error) {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		id, err := dispatch(j)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// inTx runs fn in a transaction of the outbox's database, and commits
// it unless fn fails.
func (c *compCell) inTx(fn func(tx runtime.Tx) error) error {
	tx, err := c.b.db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// compClock is a schedule's clock stopped at a tick, so that one pass
// dispatches each entry's tick.
type compClock struct{ at time.Time }

func (c compClock) Now(context.Context) (time.Time, error) { return c.at, nil }
func (compClock) After(d time.Duration) <-chan time.Time   { return time.After(d) }
