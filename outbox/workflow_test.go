package outbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// The jobs of the workflows dispatched in a transaction, written as
// jobgen writes them for `needs=`: an invoice is priced and its lines
// counted in parallel, then sent with both results.

type wfPrice struct{ Invoice string }

func (wfPrice) JobName() string                { return "txwf.Price" }
func (wfPrice) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "price"} }
func (j wfPrice) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfCount struct{ Invoice string }

func (wfCount) JobName() string                { return "txwf.Count" }
func (wfCount) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "count"} }
func (j wfCount) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfSend struct{ Invoice string }

func (wfSend) JobName() string { return "txwf.Send" }
func (wfSend) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Queue: "send", Needs: []string{"txwf.Price", "txwf.Count"}}
}
func (j wfSend) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

func (j wfSend) AddTo(wf *runtime.Workflow, price runtime.Step[wfPrice], count runtime.Step[wfCount]) runtime.Step[wfSend] {
	return runtime.AddStep(wf, j, runtime.Needs(price.Need(), count.Need()))
}

type wfSendInputs struct {
	Cents int64
	Lines int
}

func decodeWfSendInputs(in *runtime.StepInputs) (v wfSendInputs, err error) {
	if v.Cents, err = runtime.Input[int64](in, 0); err != nil {
		return v, err
	}
	v.Lines, err = runtime.Input[int](in, 1)
	return v, err
}

var wfTxQueues = []string{"price", "count", "send", runtime.DefaultQueue}

// wfTxRec counts the runs of each step's handler, and what the last one
// was handed.
type wfTxRec struct {
	mu   sync.Mutex
	runs map[string]int
	sent []string
}

func (r *wfTxRec) ran(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[k]++
}

func (r *wfTxRec) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.runs {
		out[k] = v
	}
	return out
}

func (r *wfTxRec) router() *runtime.Router {
	r.runs = map[string]int{}
	router := runtime.NewRouter()
	runtime.RegisterResult(router, "txwf.Price", func(_ context.Context, j wfPrice) (int64, error) {
		r.ran("price:" + j.Invoice)
		return 1250, nil
	})
	runtime.RegisterResult(router, "txwf.Count", func(_ context.Context, j wfCount) (int, error) {
		r.ran("count:" + j.Invoice)
		return 3, nil
	})
	runtime.RegisterStep(router, "txwf.Send", func(_ context.Context, j wfSend, in wfSendInputs) error {
		r.ran("send:" + j.Invoice)
		r.mu.Lock()
		r.sent = append(r.sent, fmt.Sprintf("%s %d cents %d lines", j.Invoice, in.Cents, in.Lines))
		r.mu.Unlock()
		return nil
	}, decodeWfSendInputs)
	return router
}

// invoiceWorkflow builds the diamond for invoice.
func invoiceWorkflow(invoice string) *runtime.Workflow {
	wf := runtime.NewWorkflow()
	price := runtime.AddStep(wf, wfPrice{Invoice: invoice})
	count := runtime.AddStep(wf, wfCount{Invoice: invoice})
	wfSend{Invoice: invoice}.AddTo(wf, price, count)
	return wf
}

// runWorkflowSteps runs a worker of 4 slots on the workflow's queues
// until they are empty.
func (b bundle) runWorkflowSteps(t *testing.T, router *runtime.Router) {
	t.Helper()
	b.runWorkflowStepsOn(t, router, 4)
}

// runWorkflowStepsOn runs a worker of slots slots on the workflow's
// queues until they are empty, for at most two minutes: a bound on a
// hang, not a speed target (a wide workflow outran a bound of 20 s under
// -race on a loaded machine).
func (b bundle) runWorkflowStepsOn(t *testing.T, router *runtime.Router, slots int) {
	t.Helper()
	w, err := runtime.NewWorker(b.engine, router, runtime.WorkerConfig{Queues: wfTxQueues, StopWhenEmpty: true,
		Concurrency: slots, Sleep: 20 * time.Millisecond, MonitorEvery: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, w.Run(ctx))
	require.NoError(t, ctx.Err(), "the worker did not stop by itself")
}

// A workflow dispatched in a transaction that commits is created by the
// relay, with the ID DispatchTx returned, and runs to its end: the
// dependent step gets its parents' results, typed.
func TestWorkflowDispatchTxCommitted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var rec wfTxRec
		router := rec.router()
		var id string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			id, err = invoiceWorkflow("inv-7").DispatchTx(b.ctx, tx)
			require.NoError(t, err)
		})
		require.NotEmpty(t, id)
		require.Equal(t, 1, b.rows(t), "one row stands for the whole workflow")
		insp := runtime.NewInspector(b.engine)
		_, err := insp.Workflow(b.ctx, id)
		require.ErrorIs(t, err, runtime.ErrNoWorkflow, "nothing reaches Redis before the relay")

		b.relayAll(t)
		require.Equal(t, 0, b.rows(t))
		require.Equal(t, int64(2), b.relay.Counts().Relayed, "the relay pushed the two first steps")
		info, err := insp.Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowRunning, info.State)

		b.runWorkflowSteps(t, router)
		require.Equal(t, map[string]int{"price:inv-7": 1, "count:inv-7": 1, "send:inv-7": 1}, rec.counts())
		require.Equal(t, []string{"inv-7 1250 cents 3 lines"}, rec.sent)
		info, err = insp.Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)
		cents, err := runtime.WorkflowResult[int64](b.ctx, insp, id, info.Steps[0].ID)
		require.NoError(t, err)
		require.Equal(t, int64(1250), cents)
	})
}

// A workflow dispatched in a transaction that rolls back creates
// nothing: no row, no workflow, no step in any queue.
func TestWorkflowDispatchTxRolledBack(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var id string
		b.tx(t, false, func(tx *sql.Tx) {
			var err error
			id, err = invoiceWorkflow("inv-8").WithID("rolled-back").DispatchTx(b.ctx, tx)
			require.NoError(t, err)
		})
		require.Equal(t, "rolled-back", id)
		require.Equal(t, 0, b.rows(t))
		b.relayAll(t)
		_, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.ErrorIs(t, err, runtime.ErrNoWorkflow)
		for _, q := range wfTxQueues {
			require.Equal(t, runtime.Sizes{}, b.sizes(t, q), "queue %s", q)
		}
		require.Zero(t, b.relay.Counts().Relayed)
	})
}

// A relay that dies after it created the workflow and pushed its first
// steps, before it deleted the row, leaves the row to the next relay:
// relayed again before the steps run, and again after the whole
// workflow ran, each step still runs once.
func TestWorkflowRelayedTwiceRunsStepsOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var rec wfTxRec
		router := rec.router()
		var id string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			id, err = invoiceWorkflow("inv-9").DispatchTx(b.ctx, tx)
			require.NoError(t, err)
		})
		b.relay.CrashAfterPush(errors.New("killed"))
		for range 2 {
			_, err := b.relay.RelayOnce(b.ctx)
			require.ErrorContains(t, err, "killed")
			require.Equal(t, 1, b.rows(t), "the row outlives the relay's transaction")
		}
		for _, q := range []string{"price", "count"} {
			require.Equal(t, int64(1), b.sizes(t, q).Ready, "the first step on queue %s, pushed by two relays, is queued once", q)
		}

		b.runWorkflowSteps(t, router)
		want := map[string]int{"price:inv-9": 1, "count:inv-9": 1, "send:inv-9": 1}
		require.Equal(t, want, rec.counts())

		// The steps ran and were acked; a third relay, which lives,
		// pushes none of them again, and deletes the row.
		b.relay.CrashAfterPush(nil)
		b.relayAll(t)
		require.Equal(t, 0, b.rows(t))
		for _, q := range wfTxQueues {
			require.Zero(t, b.sizes(t, q).Ready, "queue %s after the row was relayed again", q)
		}
		b.runWorkflowSteps(t, router)
		require.Equal(t, want, rec.counts(), "a step ran again")
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)
	})
}

// A workflow too wide for one call (200 invoices' diamonds, 600 steps)
// is stored in parts, then created, by the relay: relayed by two
// relays that die after their pushes, then by one that lives, each step
// runs once, handed its parents' results.
func TestWorkflowDispatchTxWideRelayedInParts(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var rec wfTxRec
		router := rec.router()
		const n = 200
		wf := runtime.NewWorkflow()
		for i := range n {
			inv := fmt.Sprint("wide-", i)
			price := runtime.AddStep(wf, wfPrice{Invoice: inv})
			count := runtime.AddStep(wf, wfCount{Invoice: inv})
			wfSend{Invoice: inv}.AddTo(wf, price, count)
		}
		var id string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			id, err = wf.DispatchTx(b.ctx, tx)
			require.NoError(t, err)
		})
		b.relay.CrashAfterPush(errors.New("killed"))
		for range 2 {
			_, err := b.relay.RelayOnce(b.ctx)
			require.ErrorContains(t, err, "killed")
		}
		b.relay.CrashAfterPush(nil)
		b.relayAll(t)
		require.Equal(t, 0, b.rows(t))
		for _, q := range []string{"price", "count"} {
			require.Equal(t, int64(n), b.sizes(t, q).Ready, "queue %s: each first step queued once", q)
		}
		b.runWorkflowStepsOn(t, router, 20)
		counts := rec.counts()
		require.Len(t, counts, 3*n)
		for k, c := range counts {
			require.Equal(t, 1, c, k)
		}
		require.Len(t, rec.sent, n)
		require.Contains(t, rec.sent, "wide-199 1250 cents 3 lines")
		info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, runtime.WorkflowSucceeded, info.State)
		require.Len(t, info.Steps, 3*n)
	})
}

// What DispatchWorkflow refuses, DispatchTx refuses before it writes:
// the transaction stays usable, and holds no row.
func TestWorkflowDispatchTxRefusesWhatDispatchRefuses(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		b.tx(t, true, func(tx *sql.Tx) {
			wf := runtime.NewWorkflow()
			runtime.AddStep(wf, mailJob{To: "x", Unique: "k"})
			_, err := wf.DispatchTx(b.ctx, tx)
			require.ErrorIs(t, err, runtime.ErrInvalid)
			require.ErrorContains(t, err, "unique_for")
			_, err = runtime.NewWorkflow().DispatchTx(b.ctx, tx)
			require.ErrorIs(t, err, runtime.ErrInvalid)
			_, err = invoiceWorkflow("inv-10").DispatchTx(b.ctx, nil)
			require.ErrorIs(t, err, runtime.ErrInvalid)
		})
		require.Equal(t, 0, b.rows(t))
	})
}

// A relay stalled past its claim's deadline creates nothing when it
// wakes: its workflow row stays, neither done nor parked, for a later
// claim, and the workflow is not made (it may have been made, have run
// and have expired meanwhile).
func TestWorkflowRelayPastItsDeadlineCreatesNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var id string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			id, err = invoiceWorkflow("inv-11").DispatchTx(b.ctx, tx)
			require.NoError(t, err)
		})
		row := runtime.RelayRow{}
		require.NoError(t, b.db.QueryRowContext(b.ctx, "SELECT id, kind, queue, name, payload FROM "+b.table).
			Scan(&row.ID, &row.Kind, &row.Queue, &row.Name, &row.Payload))
		require.Equal(t, id, row.ID)
		require.Equal(t, "workflow", row.Kind)

		res, err := b.engine.PushRelayed(b.ctx, time.UnixMilli(1), []runtime.RelayRow{row})
		require.ErrorContains(t, err, "LATE")
		require.Equal(t, []runtime.RelayOutcome{{}}, res.Rows)
		_, err = runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.ErrorIs(t, err, runtime.ErrNoWorkflow)
		for _, q := range wfTxQueues {
			require.Equal(t, runtime.Sizes{}, b.sizes(t, q), "queue %s", q)
		}

		res, err = b.engine.PushRelayed(b.ctx, time.Now().Add(time.Minute), []runtime.RelayRow{row})
		require.NoError(t, err)
		require.True(t, res.Rows[0].Done)
		require.Equal(t, int64(2), res.Pushed)
		_, err = runtime.NewInspector(b.engine).Workflow(b.ctx, id)
		require.NoError(t, err)
	})
}

// A workflow row the relay can never create (its plan does not decode,
// or wf_create refuses it) is parked, saying why, and the rows beside
// it are relayed.
func TestWorkflowRowThatCannotBeCreatedIsParked(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		// 0x93 is a msgpack array of 3, where the plan is a map.
		_, err := b.db.ExecContext(b.ctx, "INSERT INTO "+b.table+" (id, kind, queue, name, payload) VALUES "+
			"('wf-junk', 'workflow', 'price', 'workflow', '\\x93010203')")
		require.NoError(t, err)
		b.tx(t, true, func(tx *sql.Tx) {
			_, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "fine"})
			require.NoError(t, err)
		})
		b.relayAll(t)
		require.Equal(t, int64(1), b.sizes(t, "mail").Ready)
		require.Equal(t, int64(1), b.relay.Counts().Parked)
		var msg string
		require.NoError(t, b.db.QueryRowContext(b.ctx, "SELECT coalesce(error, '') FROM "+b.table+" WHERE id = 'wf-junk'").Scan(&msg))
		require.Contains(t, msg, "decode workflow plan")
	})
}
