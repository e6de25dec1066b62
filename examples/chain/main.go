// Command chain runs two orders through a chain of jobs: reserve stock,
// charge the card, ship, email the receipt. Each job runs only after the
// one before it succeeded. The second order's card is declined, so its
// chain stops there, and the chain's catch callback queues a job that
// gives its stock back.
//
//	go run ./examples/chain
//	go run ./examples/chain -redis redis://127.0.0.1:6379/0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/jobgen/jobgen/runtime"

	_ "github.com/jobgen/jobgen/runtime/embedded" // embedded:// for the example
)

func main() {
	url := flag.String("redis", "embedded://", "Redis URL: redis://host:port/db, or embedded:// for an in-process server")
	flag.Parse()
	if err := run(context.Background(), *url, "chain-example", os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chain:", err)
		os.Exit(1)
	}
}

// run dispatches the orders' chains and works them off, printing to out.
// Its keys start with prefix.
func run(ctx context.Context, url, prefix string, out io.Writer) error {
	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{Prefix: prefix})
	if err != nil {
		return err
	}
	defer engine.Close()
	runtime.SetDefaultDispatcher(engine)

	orders := []struct {
		id    string
		items []string
		cents int
		card  string
	}{
		{"A-1", []string{"lamp", "bulb"}, 4250, "4242"},
		{"B-2", []string{"chair"}, 12900, "declined"},
	}
	for _, o := range orders {
		chain := runtime.Chain(
			ReserveStock{OrderID: o.id, Items: o.items},
			ChargeCard{OrderID: o.id, Cents: o.cents, Card: o.card},
			ShipOrder{OrderID: o.id},
			EmailReceipt{OrderID: o.id},
		).Catch(orderFailed.With(o.id))
		if _, err := chain.Dispatch(ctx); err != nil {
			return err
		}
	}

	router := runtime.NewRouter()
	Register(router, nil) // every job has its own Handle method
	runtime.RegisterCallback(router, orderFailed)
	// One job at a time, so that the output comes in order.
	worker, err := runtime.NewWorker(engine, router, runtime.WorkerConfig{
		Queues:        []string{"orders"},
		Concurrency:   1,
		StopWhenEmpty: true,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	// Handlers and failed hooks get their context from this one.
	return worker.Run(context.WithValue(ctx, printerKey{}, &printer{w: out}))
}

// orderFailed is the catch of every order's chain: it runs when a link
// fails for good, after which the links left are dropped. A chain
// carries only its name and argument (the order's ID), so it is declared
// once, at package level, and registered on every worker's router.
var orderFailed = runtime.NewCallback("orders.failed", func(ctx context.Context, orderID string, o runtime.Outcome) error {
	say(ctx, "order %s: %s failed for good (declined: %t); the rest of its chain is dropped",
		orderID, o.JobName, errors.Is(o.Err, errDeclined))
	_, err := ReleaseStock{OrderID: orderID}.Dispatch(ctx)
	return err
})

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
