package dashboard_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// A page past the end of any list, however large its number, sends the
// browser to the list's last page, and logs nothing.
func TestPagesPastTheEndGoToTheLast(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	b := setup(t, dashboard.Options{PageSize: 2, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	for range 5 {
		_, err := runtime.Dispatch(b.ctx, note{Text: "x", tags: []string{"big"}})
		require.NoError(t, err)
	}
	lists := map[string]string{ // list -> its last page
		"queues/notes":               "3",
		"queues/notes?state=delayed": "1",
		"failed":                     "1",
		"failed?queue=notes":         "1",
		"search?tag=big":             "3",
		"completed?queue=notes":      "1",
		"batches":                    "1",
	}
	for list, last := range lists {
		for _, page := range []string{"4", "99", "2147483648", "9223372036854775807", "99999999999999999999999"} {
			u, err := url.Parse(list)
			require.NoError(t, err)
			q := u.Query()
			q.Set("page", page)
			u.RawQuery = q.Encode()
			status, _, hdr := b.get(t, u.String())
			require.Equal(t, http.StatusSeeOther, status, "%s page %s", list, page)
			to, err := url.Parse(hdr.Get("Location"))
			require.NoError(t, err)
			require.Equal(t, last, to.Query().Get("page"), "%s page %s", list, page)
		}
		status, _, _ := b.get(t, list+map[bool]string{true: "&", false: "?"}[bytes.ContainsRune([]byte(list), '?')]+"page="+last)
		require.Equal(t, http.StatusOK, status, list)
	}
	require.Empty(t, log.String())
}
