package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// liveStatuses records the status of each live refresh the dashboard
// answers.
type liveStatuses struct {
	mu       sync.Mutex
	statuses []int
	log      []string // status, the ETag asked for and the one sent
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

func (l *liveStatuses) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		if r.Header.Get("X-Dashboard-Live") == "1" {
			l.mu.Lock()
			l.statuses = append(l.statuses, sw.status)
			l.log = append(l.log, strconv.Itoa(sw.status)+" "+r.Header.Get("If-None-Match")+" -> "+w.Header().Get("ETag"))
			l.mu.Unlock()
		}
	})
}

func (l *liveStatuses) count(status int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.statuses {
		if s == status {
			n++
		}
	}
	return n
}

// An overview on which nothing changes is refreshed with 304s, and the
// wait it shows still moves on: live.js moves the times itself.
func TestIdleOverviewRefreshesWith304sAndItsTimesMove(t *testing.T) {
	ctx := startBrowser(t)
	bg := context.Background()
	e, err := runtime.Open(bg, "redis://"+redistest.Addr(t)+"/0", runtime.EngineConfig{Prefix: redistest.Prefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	_, err = runtime.Dispatch(runtime.WithDispatcher(bg, e), buildReport{})
	require.NoError(t, err)
	var live liveStatuses
	srv := httptest.NewServer(live.wrap(dashboard.New(e, dashboard.Options{Refresh: 300 * time.Millisecond, Logger: quiet})))
	t.Cleanup(srv.Close)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	seconds := func() int {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#queues time[data-ago]").textContent`))
		require.NoError(t, err)
		m := regexp.MustCompile(`^(\d+)(ms|s)$`).FindStringSubmatch(s)
		require.NotNil(t, m, "wait %q", s)
		if m[2] == "ms" {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	first := seconds()
	until(t, ctx, `document.documentElement.hasAttribute("data-refreshed")`)
	time.Sleep(2500 * time.Millisecond)
	require.GreaterOrEqual(t, seconds(), first+2, "the wait moved on")
	require.GreaterOrEqual(t, live.count(http.StatusNotModified), 3, "refreshes answered 304")
	// The first refresh has no ETag yet; the charts' axes move when a
	// minute begins, which may fall in these seconds.
	require.LessOrEqual(t, live.count(http.StatusOK), 2, "refreshes that sent the page: %q", live.log)
}
