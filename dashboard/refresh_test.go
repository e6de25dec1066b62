package dashboard_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// Pages with nothing live on them do not refresh themselves; pages are
// sent gzipped to a browser that takes it.
func TestRefreshOnlyWhatIsLiveAndGzip(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	_, err := runtime.Dispatch(b.ctx, note{Text: "x"})
	require.NoError(t, err)
	for path, refresh := range map[string]string{
		"":                      `data-refresh="2000"`,
		"completed":             `data-refresh="0"`,
		"completed?queue=notes": `data-refresh="0"`,
		"metrics":               `data-refresh="0"`,
	} {
		_, body, _ := b.get(t, path)
		require.Contains(t, body, refresh, path)
	}

	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, path := range []string{"", "queues/notes", "failed", "completed"} {
		req, err := http.NewRequest(http.MethodGet, b.url(path), nil)
		require.NoError(t, err)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		res, err := raw.Do(req)
		require.NoError(t, err)
		require.Equal(t, "gzip", res.Header.Get("Content-Encoding"), path)
		zr, err := gzip.NewReader(res.Body)
		require.NoError(t, err)
		page, err := io.ReadAll(zr)
		require.NoError(t, err)
		_ = res.Body.Close()
		require.Contains(t, string(page), "<!doctype html>", path)

		req.Header.Del("Accept-Encoding")
		res, err = raw.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		require.Empty(t, res.Header.Get("Content-Encoding"), path)
	}
}
