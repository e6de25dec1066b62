package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestChains runs the example on each backend. Not in parallel: it sets
// runtime's default dispatcher.
func TestChains(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			prefix := redistest.Prefix(t)
			e, err := runtime.Open(ctx, be.URL, runtime.EngineConfig{Prefix: prefix})
			require.NoError(t, err)
			defer e.Close()

			var out bytes.Buffer
			require.NoError(t, run(ctx, be.URL, prefix, &out))
			var a, b []string // each order's lines, in order
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				switch {
				case strings.HasPrefix(line, "order A-1: "):
					a = append(a, strings.TrimPrefix(line, "order A-1: "))
				case strings.HasPrefix(line, "order B-2: "):
					b = append(b, strings.TrimPrefix(line, "order B-2: "))
				}
			}
			require.Equal(t, []string{"reserved lamp, bulb", "charged $42.50", "shipped", "receipt emailed"}, a)
			require.Equal(t, []string{"reserved chair", "charging $129.00: declined",
				"main.ChargeCard failed for good (declined: true); the rest of its chain is dropped", "stock released"}, b)

			failed, err := runtime.NewInspector(e).Failed().List(ctx, "orders", 0, 10)
			require.NoError(t, err)
			require.Len(t, failed, 1)
			require.Equal(t, "main.ChargeCard", failed[0].Name)
			s, err := runtime.NewInspector(e).Sizes(ctx, "orders")
			require.NoError(t, err)
			require.Zero(t, s.Total())
		})
	}
}
