// Command workflow runs two orders through a workflow: charge the card
// and reserve the stock in parallel, then ship with both results, then
// email the customer once per line item and write a summary of the
// emails. The second order's card is declined: its workflow fails, the
// steps after the charge never run, and the workflow's catch queues a
// job that gives its stock back.
//
//	go run ./examples/workflow
//	go run ./examples/workflow -redis redis://127.0.0.1:6379/0
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // embedded:// for the example
)

func main() {
	url := flag.String("redis", "embedded://", "Redis URL: redis://host:port/db, or embedded:// for an in-process server")
	flag.Parse()
	if _, err := run(context.Background(), *url, "workflow-example", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "workflow:", err)
		os.Exit(1)
	}
}

// order is one order of the example.
type order struct {
	id    string
	items []string
	cents int
	card  string
}

// run dispatches each order's workflow and works them off, printing to
// out, and returns the workflows' IDs. Its keys start with prefix.
func run(ctx context.Context, url, prefix string, out io.Writer) ([]string, error) {
	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
	if err != nil {
		return nil, err
	}
	defer engine.Close()
	runtime.SetDefaultDispatcher(engine)

	orders := []order{
		{"A-1", []string{"lamp", "bulb", "shade"}, 4250, "4242"},
		{"B-2", []string{"chair"}, 12900, "declined"},
	}
	var ids []string
	for _, o := range orders {
		id, err := orderWorkflow(o).Dispatch(ctx)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}

	p := &printer{w: out}
	router := runtime.NewRouter()
	Register(router, handlers{p: p})
	runtime.RegisterCallback(router, orderFailed)
	worker, err := runtime.NewWorker(engine, router, runtime.WorkerConfig{
		Queues:        []string{"payments", "stock", "shipping", "mail"},
		Concurrency:   4,
		StopWhenEmpty: true,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	return ids, worker.Run(context.WithValue(ctx, printerKey{}, p))
}

// orderWorkflow builds the workflow of one order. The generated AddTo of
// ShipOrder takes the charge's and the reservation's steps, typed: a
// step of another job does not compile there.
func orderWorkflow(o order) *runtime.Workflow {
	wf := runtime.NewWorkflow().WithID("order-" + o.id).Catch(orderFailed.With(o.id))
	charge := runtime.AddStep(wf, ChargeCard{OrderID: o.id, Cents: o.cents, Card: o.card})
	stock := runtime.AddStep(wf, ReserveStock{OrderID: o.id, Items: o.items})
	ship := ShipOrder{OrderID: o.id}.AddTo(wf, charge, stock)
	runtime.AddStep(wf, NotifyLines{OrderID: o.id, Items: o.items}, runtime.After(ship))
	return wf
}

// orderFailed is the catch of every order's workflow: it runs once when
// a step fails for good, after the steps left are dropped.
var orderFailed = runtime.NewCallback("orders.failed", func(ctx context.Context, orderID string, o runtime.Outcome) error {
	if p, ok := ctx.Value(printerKey{}).(*printer); ok {
		p.say("order %s: workflow failed (declined: %t); its other steps are dropped", orderID, o.Err != nil && strings.Contains(o.Err.Error(), errDeclined.Error()))
	}
	_, err := ReleaseStock{OrderID: orderID}.Dispatch(ctx)
	return err
})

// printerKey carries the printer to the catch callback.
type printerKey struct{}

// printer prints whole lines.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}
