package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestWorkflowExample runs the example on each backend. Not in parallel:
// it sets runtime's default dispatcher.
func TestWorkflowExample(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			prefix := redistest.Prefix(t)
			e, err := runtime.Open(ctx, be.URL, runtime.EngineConfig{Prefix: prefix})
			require.NoError(t, err)
			defer e.Close()
			var out bytes.Buffer
			ids, err := run(ctx, be.URL, prefix, &out)
			require.NoError(t, err)
			var a, b []string // each order's lines, in order
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				switch {
				case strings.HasPrefix(line, "order A-1: "):
					a = append(a, strings.TrimPrefix(line, "order A-1: "))
				case strings.HasPrefix(line, "order B-2: "):
					b = append(b, strings.TrimPrefix(line, "order B-2: "))
				}
			}
			// Charge and reserve run in parallel, in either order; ship
			// follows both, with both results; the summary comes last,
			// with the emails' results in the order of the items.
			require.Len(t, a, 4, out.String())
			require.ElementsMatch(t, []string{"charged $42.50", "reserved lamp, bulb, shade"}, a[:2])
			require.Equal(t, "shipped 3 items from east, paid by ch_A-1", a[2])
			require.Equal(t, "emailed customer-A-1 about lamp, bulb, shade", a[3])

			require.Contains(t, b, "charging $129.00: declined")
			require.Contains(t, b, "workflow failed (declined: true); its other steps are dropped")
			require.Equal(t, "stock released", b[len(b)-1])
			require.False(t, slices.ContainsFunc(b, func(s string) bool { return strings.HasPrefix(s, "shipped") }))

			in := runtime.NewInspector(e)
			ok, err := in.Workflow(ctx, ids[0])
			require.NoError(t, err)
			require.Equal(t, runtime.WorkflowSucceeded, ok.State)
			require.Len(t, ok.Steps, 4+3+1, "4 dispatched, 3 emails and a summary spawned")
			bad, err := in.Workflow(ctx, ids[1])
			require.NoError(t, err)
			require.Equal(t, runtime.WorkflowFailed, bad.State)
			shipped, err := runtime.WorkflowResult[Shipment](ctx, in, ids[0], "2")
			require.NoError(t, err)
			require.Equal(t, "trk_A-1", shipped.Tracking)
		})
	}
}
