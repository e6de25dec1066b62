package jobprom

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobgen/jobgen/runtime"
)

// failedTrimmedDescs are the metrics of failed jobs trimmed from the
// failed store (runtime.FailedStore.Trimmed): none unless
// EngineConfig.FailedMaxCount or FailedMaxAge is set.
type failedTrimmedDescs struct {
	total, last *prometheus.Desc
}

func newFailedTrimmedDescs() failedTrimmedDescs {
	return failedTrimmedDescs{
		total: prometheus.NewDesc("jobgen_failed_trimmed_total",
			"Failed jobs dropped from a queue's failed store by trimming (EngineConfig.FailedMaxCount, FailedMaxAge); alert on any increase.",
			[]string{"queue"}, nil),
		last: prometheus.NewDesc("jobgen_failed_trimmed_last_timestamp_seconds",
			"When trimming last dropped failed jobs of a queue (Redis clock, Unix seconds); absent if never.",
			[]string{"queue"}, nil),
	}
}

func (d failedTrimmedDescs) describe(ch chan<- *prometheus.Desc) {
	ch <- d.total
	ch <- d.last
}

// collect reports how many failed jobs were trimmed from each queue's
// store: for every queue, 0 included, when e's failed store is bounded,
// so that a rate or an increase sees the first trim; otherwise (nothing
// is trimmed by default) only for queues trimmed before.
func (d failedTrimmedDescs) collect(ctx context.Context, e *runtime.Engine, ch chan<- prometheus.Metric, queues []string) {
	trims, err := runtime.NewInspector(e).Failed().Trimmed(ctx, queues...)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(d.total, err)
		return
	}
	cfg := e.Config()
	bounded := cfg.FailedMaxCount > 0 || cfg.FailedMaxAge > 0
	for _, t := range trims {
		if t.Count == 0 && !bounded {
			continue
		}
		ch <- prometheus.MustNewConstMetric(d.total, prometheus.CounterValue, float64(t.Count), t.Queue)
		if !t.Last.IsZero() {
			ch <- prometheus.MustNewConstMetric(d.last, prometheus.GaugeValue, float64(t.Last.UnixMilli())/1000, t.Queue)
		}
	}
}
