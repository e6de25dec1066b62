package bench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSmoke runs every system through every phase, the rss phase
// included, with a few hundred jobs, so the harness keeps building and
// running. It checks that each ran and lost no job; it asserts no
// figures. Peers that deliver at least once may run a job twice: their
// duplicates are logged, not failed.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every system against Redis for tens of seconds")
	}
	cfg := Config{
		RedisURL:    testURL(testDB),
		Phases:      AllPhases,
		N:           300,
		Producers:   4,
		Concurrency: 10,
		Batch:       100,
		Rate:        200,
		Duration:    time.Second,
		DelayedN:    50,
		DelayedRate: 100,
		RSSN:        300,
		Timeout:     60 * time.Second,
		// Short polls keep the peers' idle sleeps from stretching the run.
		PeerPoll: 50 * time.Millisecond,
		Log:      tWriter{t},
	}
	recs, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)

	got := map[[2]string]Record{}
	for _, r := range recs {
		got[[2]string{r.System, r.Phase}] = r
	}
	for _, s := range Systems {
		for _, p := range AllPhases {
			r, ok := got[[2]string{s.Name, p}]
			if !assertRan(t, ok, s.Name, p) {
				continue
			}
			require.Emptyf(t, r.Error, "%s %s", s.Name, p)
			require.Zerof(t, r.Missing, "%s %s: missing jobs", s.Name, p)
			if r.Duplicates > 0 {
				require.Truef(t, s.AtLeastOnce, "%s %s: %d duplicates", s.Name, p, r.Duplicates)
				t.Logf("%s %s: %d duplicates (at-least-once delivery)", s.Name, p, r.Duplicates)
			}
			require.Positivef(t, r.Seconds, "%s %s: no time measured", s.Name, p)
			switch p {
			case PhaseEnqueue, PhaseDrain, PhaseMixed, PhaseBulk:
				require.Positivef(t, r.RedisCPUPerJob, "%s %s: no Redis CPU measured", s.Name, p)
				require.Positivef(t, r.ClientCPUPerJob, "%s %s: no client CPU measured", s.Name, p)
			}
			if p == PhaseRSS {
				require.NotNilf(t, r.RSS, "%s: no RSS samples", s.Name)
				require.Positivef(t, r.RSS.EndMB, "%s: no RSS measured", s.Name)
			}
		}
	}
	var table bytes.Buffer
	cfg.setDefaults()
	require.NoError(t, WriteTable(&table, cfg, recs))
	t.Logf("\n%s", table.String())
}

func assertRan(t *testing.T, ok bool, system, phase string) bool {
	t.Helper()
	if !ok {
		t.Errorf("%s did not run the %s phase", system, phase)
	}
	return ok
}

// tWriter sends the harness's progress lines to the test log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
