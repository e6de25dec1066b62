package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// BenchmarkSearchBigPayloads searches 200 jobs of 100 KB payloads by a
// tag none carries: a search decodes only the envelopes it scans, and
// the bodies of the page it shows.
func BenchmarkSearchBigPayloads(b *testing.B) {
	bb := setup(b, dashboard.Options{})
	big := strings.Repeat("x", 100_000)
	for range 200 {
		_, err := runtime.Dispatch(bb.ctx, note{Text: big, tags: []string{"bulk"}})
		require.NoError(b, err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := bb.client.Get(bb.url("search?tag=nothing"))
		require.NoError(b, err)
		require.Equal(b, http.StatusOK, res.StatusCode)
		_ = res.Body.Close()
	}
}
