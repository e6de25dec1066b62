package jobprom_test

import (
	_ "embed"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

//go:embed dashboard.json
var dashboard []byte

// TestDashboardNamesOnlyExportedMetrics: the Grafana dashboard is valid
// JSON and every metric its queries name is one this package exports.
func TestDashboardNamesOnlyExportedMetrics(t *testing.T) {
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(dashboard, &d))
	exported := map[string]bool{
		"jobgen_jobs_dispatched_total": true, "jobgen_jobs_processed_total": true, "jobgen_jobs_failed_total": true,
		"jobgen_jobs_released_total": true, "jobgen_jobs_retried_total": true, "jobgen_jobs_timed_out_total": true, "jobgen_jobs_cancelled_total": true,
		"jobgen_job_duration_seconds_bucket": true, "jobgen_job_pickup_latency_seconds_bucket": true,
		"jobgen_queue_jobs": true, "jobgen_queue_paused": true, "jobgen_worker_busy_slots": true,
		"jobgen_queue_limit": true, "jobgen_queue_running": true, "jobgen_queue_throttled_total": true,
	}
	name := regexp.MustCompile(`jobgen_[a-z_]+`)
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				require.True(t, exported[m], "dashboard names %s", m)
				n++
			}
			require.False(t, strings.Contains(tg.Expr, "id="), "a query by job ID")
		}
	}
	require.Positive(t, n)
}
