package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// History shows each job class's wait beside its runtime: a chart and
// the p50 and p95 of each slot, within the bound of commands.
func TestHistoryPageShowsWait(t *testing.T) {
	o := setupOwn(t, runtime.EngineConfig{Prefix: "p", KeepFinished: map[string]runtime.FinishedConfig{"*": {MaxJobs: 100}}})
	for range 4 {
		_, err := runtime.Dispatch(o.ctx, placed{Q: hostileRTL, Text: "p"})
		require.NoError(t, err)
	}
	// the jobs wait at least this long, ready
	time.Sleep(300 * time.Millisecond)
	r := runtime.NewRouter()
	runtime.Register(r, "test.Placed", func(ctx context.Context, p placed) error { return nil })
	w, err := runtime.NewWorker(o.engine, r, runtime.WorkerConfig{Queues: []string{hostileRTL}, StopWhenEmpty: true, Sleep: 20 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, w.Run(o.ctx))

	page := "history?queue=" + url.QueryEscape(hostileRTL) + "&span=1h"
	status, body, n := o.counted(t, page)
	require.Equal(t, http.StatusOK, status)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	require.Contains(t, body, `<figure class="chart-box wait-chart">`)
	require.Contains(t, body, `<figure class="chart-box wait-chart" id="queue-wait">`)
	require.Contains(t, body, `aria-label="waits of every job class, last 1h"`)
	require.Contains(t, body, `aria-label="waits, last 1h"`)
	require.Contains(t, body, "<th class=\"n\">Wait p50</th><th class=\"n\">Wait p95</th>")
	rows := body[strings.Index(body, `<table class="grid-table class-slots">`):]
	rows = rows[strings.Index(rows, "<tbody>"):strings.Index(rows, "</tbody>")]
	cells := strings.Split(rows, `<td class="n">`)
	require.Len(t, cells, 7, "one slot: jobs, per minute, p50, p95, wait p50, wait p95: %s", rows)
	waitP50 := strings.TrimSuffix(strings.SplitN(cells[5], "<", 2)[0], "")
	d, err := time.ParseDuration(strings.ReplaceAll(waitP50, " ", ""))
	require.NoError(t, err, waitP50)
	require.GreaterOrEqual(t, d, 250*time.Millisecond, "the wait includes the 300 ms before the worker ran")
}
