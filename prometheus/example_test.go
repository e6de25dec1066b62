package jobprom_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	jobprom "github.com/jobgen/jobgen/prometheus"
	"github.com/jobgen/jobgen/runtime"
)

// A worker counted by Metrics, and its queue read by a QueueCollector at
// scrape time.
func Example() {
	ctx := context.Background()
	// embedded:// is an in-process Redis; a program imports
	// runtime/embedded for it (the tests have it through redistest).
	engine, err := runtime.Open(ctx, "embedded://example-prom", runtime.EngineConfig{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	m := jobprom.New(jobprom.Config{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(m, jobprom.NewQueueCollector(engine, nil))

	cfg := runtime.WorkerConfig{StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	m.Instrument(engine, &cfg)
	r := runtime.NewRouter()
	runtime.Register(r, "test.Step", func(ctx context.Context, s step) error { return nil })
	w, err := runtime.NewWorker(engine, r, cfg)
	if err != nil {
		panic(err)
	}
	m.Attach(w)
	dctx := runtime.WithDispatcher(ctx, engine)
	for n := range 2 {
		if _, err := runtime.Dispatch(dctx, step{N: n}); err != nil {
			panic(err)
		}
	}
	if err := w.Run(ctx); err != nil {
		panic(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		if name := mf.GetName(); name == "jobgen_jobs_processed_total" || strings.HasPrefix(name, "jobgen_queue_") {
			for _, mt := range mf.GetMetric() {
				var labels []string
				for _, l := range mt.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				fmt.Printf("%s{%s} %g\n", name, strings.Join(labels, ","), mt.GetGauge().GetValue()+mt.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// jobgen_jobs_processed_total{job=test.Step,queue=default} 2
	// jobgen_queue_jobs{queue=default,state=delayed} 0
	// jobgen_queue_jobs{queue=default,state=failed} 0
	// jobgen_queue_jobs{queue=default,state=ready} 0
	// jobgen_queue_jobs{queue=default,state=reserved} 0
	// jobgen_queue_paused{queue=default} 0
}
