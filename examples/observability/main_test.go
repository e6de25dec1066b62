package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestObservability runs the example on each backend: the span tree
// shows the request's send, each attempt linked to its send, and each
// next link sent from within the attempt before it; the scrape counts
// the jobs exactly.
func TestObservability(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(context.Background(), be.URL, redistest.Prefix(t), &out))
			text := out.String()
			require.Contains(t, text, `Spans (children indented; a link is -> the span it links to):
- POST /orders
  - send orders (producer main.ChargeOrder)
- process orders (consumer main.ChargeOrder attempt 1)  -> send orders (producer main.ChargeOrder)  [error]
- process orders (consumer main.ChargeOrder attempt 2)  -> send orders (producer main.ChargeOrder)  [ok]
  - send orders (producer main.SendReceipt)
- process orders (consumer main.SendReceipt attempt 1)  -> send orders (producer main.SendReceipt)  [ok]
  - send orders (producer main.ShipOrder)
- process orders (consumer main.ShipOrder attempt 1)  -> send orders (producer main.ShipOrder)  [ok]
`)
			for _, line := range []string{
				`jobgen_jobs_dispatched_total{job="main.ChargeOrder",queue="orders"} 1`,
				`jobgen_jobs_processed_total{job="main.ChargeOrder",queue="orders"} 1`,
				`jobgen_jobs_retried_total{job="main.ChargeOrder",queue="orders"} 1`,
				`jobgen_jobs_processed_total{job="main.ShipOrder",queue="orders"} 1`,
				`jobgen_job_duration_seconds_count{job="main.ChargeOrder",queue="orders"} 2`,
				`jobgen_queue_jobs{queue="orders",state="ready"} 0`,
				`jobgen_queue_paused{queue="orders"} 0`,
				`jobgen_worker_busy_slots{worker="worker-1"} 0`,
			} {
				require.Contains(t, strings.Split(text, "\n"), line)
			}
		})
	}
}
