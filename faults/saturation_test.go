package faults_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
	"github.com/jobgen/jobgen/faults/internal/harness"
	"github.com/jobgen/jobgen/runtime"
)

// saturationEnv sets how long TestSaturation's producers outrun the
// workers, as a Go duration: 10 minutes in the long build, 5 seconds
// otherwise.
const saturationEnv = "JOBGEN_FAULTS_SATURATION"

// TestSaturation measures the workers' drain rate, then has producers
// dispatch at twice that rate for 10 minutes (5 s in the fast mode), and
// stops them. It reports Redis memory per waiting job across the
// backlog, the workers' RSS, and the time to drain. Nothing may be lost,
// and Redis's memory returns to within 10% (and 4 MB) of where it began,
// once the records of the last minute's calls have expired.
func TestSaturation(t *testing.T) {
	length := harness.Scale(5*time.Second, 10*time.Minute)
	if s := os.Getenv(saturationEnv); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, saturationEnv)
		length = d
	}
	b := setup(t)
	f := b.fleet(t, func(c *faultworker.Config) { c.Concurrency = 4 })
	f.Start(2)
	task := func(int) faultworker.Task { return faultworker.Task{Millis: 1} }

	// The drain rate: 2,000 jobs pushed at once, timed to the last ack.
	const probe = 2000
	baseline := usedMemory(t, b)
	b.disp.PushN(b.ctx, probe, task)
	rate := float64(probe) / harness.Drain(t, b.engine, queue, time.Minute).Seconds()

	// Twice that rate, in pushes of 100 every 100/(2*rate) seconds.
	every := time.Duration(float64(time.Second) * 100 / (2 * rate))
	rssStart := workersRSS(t, f)
	ctx, stop := context.WithTimeout(b.ctx, length)
	tick := time.NewTicker(every)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			b.disp.PushN(b.ctx, 100, task)
		}
	}
	tick.Stop()
	stop()
	s, err := runtime.NewInspector(b.engine).Sizes(b.ctx, queue)
	require.NoError(t, err)
	peak := usedMemory(t, b)
	rssPeak := workersRSS(t, f)
	drained := harness.Drain(t, b.engine, queue, 3*length+time.Minute)
	rssEnd := workersRSS(t, f)
	// What the drain leaves in Redis for a while: the records of the last
	// minute's calls, kept for EngineConfig.RetryWindow (1 minute), and
	// the per-minute counts. Memory is back when they have gone.
	slack := max(baseline/10, 4<<20)
	drainedAt := time.Now()
	left := usedMemory(t, b)
	after := left
	for after > baseline+slack && time.Since(drainedAt) < 90*time.Second {
		time.Sleep(time.Second)
		after = usedMemory(t, b)
	}
	back := time.Since(drainedAt)
	f.StopAll(10 * time.Second)

	o := b.check(t, f)
	backlog := s.Ready + s.Delayed + s.Reserved
	perJob := 0.0
	if backlog > 0 {
		perJob = float64(peak-baseline) / float64(backlog)
	}
	t.Logf("figures: drain rate %.0f jobs/s, producers at %.0f jobs/s for %v; backlog %d jobs at the stop; Redis memory %s at start, %s at the stop (%.0f B per waiting job), %s just after the drain, %s %v after; workers' RSS %s at start, %s at the stop, %s after; drained in %v; %d acknowledged, lost %d",
		rate, 2*rate, length, backlog, mb(baseline), mb(peak), perJob, mb(left), mb(after), back.Round(time.Second), mb(rssStart), mb(rssPeak), mb(rssEnd), drained.Round(100*time.Millisecond), o.Acked, len(o.Lost))
	require.Positive(t, backlog, "the producers outran the workers")
	require.LessOrEqual(t, after, baseline+slack, "Redis memory returns to its baseline")
}

// workersRSS sums the resident set of the fleet's live workers.
func workersRSS(t *testing.T, f *harness.Fleet) int64 {
	t.Helper()
	var sum int64
	for slot := range 2 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(f.Proc(slot).PID()) + "/status")
		if err != nil {
			continue // not Linux, or gone
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				sum += kb << 10
			}
		}
	}
	return sum
}

func mb(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB" }
