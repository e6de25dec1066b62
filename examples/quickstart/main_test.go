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

// TestQuickstart runs the quickstart on each backend and checks what it
// prints, in causal order where there is one. It does not run in
// parallel: the quickstart sets runtime's default dispatcher.
func TestQuickstart(t *testing.T) {
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			var out bytes.Buffer
			prefix := redistest.Prefix(t)
			require.NoError(t, run(context.Background(), config{URL: be.URL, Prefix: prefix, Out: &out}))
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			want := 20 // on a real Redis, a last line says how to list the failed job
			if be.Name == "embedded" {
				want = 19
			}
			require.Len(t, lines, want, out.String())

			// Causes come before their effects.
			before := func(a, b string) {
				t.Helper()
				ia, ib := indexOf(lines, a), indexOf(lines, b)
				require.True(t, ia >= 0 && ib >= 0 && ia < ib, "want %q before %q in:\n%s", a, b, out.String())
			}
			before("Working:", "  sent a welcome email to ada@example.com")
			before("  resized the avatar of user 2 to [64 256]", "  told the team: user 2 is set up")
			before("  welcome email to nobody@example.invalid, attempt 1: rejected", "  main.SendWelcomeEmail attempt 1 failed; retry in 100ms")
			before("  main.SendWelcomeEmail attempt 1 failed; retry in 100ms", "  welcome email to nobody@example.invalid, attempt 2: rejected")
			before("  main.SendWelcomeEmail attempt 2 failed; retry in 200ms", "  welcome email to nobody@example.invalid, attempt 3: rejected")
			before("  main.SendWelcomeEmail failed for good after 3 attempts", "Done: nothing left to run.")
			before("  resized the avatar of user 1 to [64]", "Done: nothing left to run.")
			require.Equal(t, "In the failed store, to retry or forget:", lines[17])
			require.Equal(t, "  main.SendWelcomeEmail on queue emails, 3 attempts: jobgen: job failed after 3 of 3 tries: send to nobody@example.invalid: 550 no such user", lines[18])
			if be.Name != "embedded" {
				require.Equal(t, "List it with: go tool jobgen queue:failed --prefix "+prefix+" --redis URL", lines[19])
			}
		})
	}
}

func indexOf(lines []string, s string) int {
	for i, l := range lines {
		if l == s {
			return i
		}
	}
	return -1
}
