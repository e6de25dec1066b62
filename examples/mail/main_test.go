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

// TestDemo runs the demo on each backend. Not in parallel: the demo
// sets runtime's default dispatcher.
func TestDemo(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			var out bytes.Buffer
			prefix := redistest.Prefix(t)
			// Open first: it keeps an embedded server alive after the demo.
			e, err := runtime.Open(context.Background(), be.URL, runtime.EngineConfig{Prefix: prefix})
			require.NoError(t, err)
			defer e.Close()
			require.NoError(t, demo(context.Background(), be.URL, prefix, &out))
			require.Equal(t, 2, strings.Count(out.String(), `msg="mail sent"`), out.String())
			require.Contains(t, out.String(), `msg="mail undeliverable" to=nobody@example.invalid`)

			failed, err := runtime.NewInspector(e).Failed().List(context.Background(), "mail", 0, 10)
			require.NoError(t, err)
			require.Len(t, failed, 1)
			require.Equal(t, "main.SendWelcome", failed[0].Name)
			require.Equal(t, 1, failed[0].Attempts)
			require.Contains(t, failed[0].Error, "550 no such domain")
		})
	}
}
