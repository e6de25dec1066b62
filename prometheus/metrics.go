package jobprom

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobgen/jobgen/runtime"
)

// DueHeader is the envelope header that holds a delayed job's due time,
// in unix milliseconds.
const DueHeader = "jobgen-due"

// Config configures Metrics. The zero value is ready to use.
type Config struct {
	// Namespace starts every metric's name; default "jobgen".
	Namespace string
	// DurationBuckets are the buckets of the handler duration histogram,
	// in seconds; default prometheus.DefBuckets.
	DurationBuckets []float64
	// PickupBuckets are the buckets of the pickup latency histogram, in
	// seconds; default from 1ms to about 1 minute.
	PickupBuckets []float64
	// ResultBuckets are the buckets of the result size histogram, in
	// bytes; default from 64 bytes to 4 MiB.
	ResultBuckets []float64
}

// Metrics counts jobs dispatched and run, and is a prometheus.Collector
// of them. It is safe for concurrent use.
type Metrics struct {
	dispatched, processed, failed, released, retried, timedOut, cancelled *prometheus.CounterVec
	// givenBackNewer counts jobs given back for a newer worker
	// (runtime.ErrNewerVersion).
	givenBackNewer               *prometheus.CounterVec
	duration, pickup, resultSize *prometheus.HistogramVec
	busyDesc                     *prometheus.Desc

	mu   sync.Mutex
	busy map[string]int       // worker -> handlers running
	due  map[string]time.Time // job ID -> when its release falls due
}

// New returns Metrics with cfg.
func New(cfg Config) *Metrics {
	ns := cfg.Namespace
	if ns == "" {
		ns = "jobgen"
	}
	if cfg.DurationBuckets == nil {
		cfg.DurationBuckets = prometheus.DefBuckets
	}
	if cfg.ResultBuckets == nil {
		cfg.ResultBuckets = prometheus.ExponentialBuckets(64, 4, 9) // 64 B .. 4 MiB
	}
	if cfg.PickupBuckets == nil {
		cfg.PickupBuckets = prometheus.ExponentialBuckets(0.001, 4, 9) // 1ms .. 65s
	}
	labels := []string{"queue", "job"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	return &Metrics{
		dispatched:     counter("jobs_dispatched_total", "Jobs pushed to a queue."),
		processed:      counter("jobs_processed_total", "Attempts whose handler succeeded."),
		failed:         counter("jobs_failed_total", "Jobs that failed for good and went to the failed store."),
		released:       counter("jobs_released_total", "Jobs released by their handler or middleware, or given back at a stop."),
		retried:        counter("jobs_retried_total", "Jobs released for another attempt after an error or a timeout."),
		timedOut:       counter("jobs_timed_out_total", "Attempts that ran past their timeout."),
		cancelled:      counter("jobs_cancelled_total", "Running jobs cancelled by an operator (runtime.JobCancelled); they went to the failed store."),
		givenBackNewer: counter("jobs_given_back_newer_total", "Jobs a worker gave back, their attempt unused, because their schema version is newer than it knows: they wait for a newer worker (docs/changing-jobs.md)."),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "job_duration_seconds",
			Help: "How long handlers ran, their job middleware included.", Buckets: cfg.DurationBuckets}, labels),
		pickup: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "job_pickup_latency_seconds",
			Help: "Time from when a job was ready (dispatched, or due) to when its handler started.", Buckets: cfg.PickupBuckets}, labels),
		resultSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "job_result_bytes",
			Help: "Size of the encoded results that succeeded jobs stored (runtime.RecordResult), in bytes.", Buckets: cfg.ResultBuckets}, labels),
		busyDesc: prometheus.NewDesc(prometheus.BuildFQName(ns, "worker", "busy_slots"), "Handlers a worker is running now.", []string{"worker"}, nil),
		busy:     map[string]int{},
		due:      map[string]time.Time{},
	}
}

func (m *Metrics) vecs() []prometheus.Collector {
	return []prometheus.Collector{m.dispatched, m.processed, m.failed, m.released, m.retried, m.timedOut, m.cancelled, m.givenBackNewer, m.duration, m.pickup, m.resultSize}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.vecs() {
		c.Describe(ch)
	}
	ch <- m.busyDesc
}

// Collect implements prometheus.Collector; the busy slots are read now.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.vecs() {
		c.Collect(ch)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for w, n := range m.busy {
		ch <- prometheus.MustNewConstMetric(m.busyDesc, prometheus.GaugeValue, float64(n), w)
	}
}

// Instrument adds m's dispatch middleware to e and its worker middleware
// to cfg, outermost. Attach the worker once it is built.
func (m *Metrics) Instrument(e *runtime.Engine, cfg *runtime.WorkerConfig) {
	e.UseDispatch(m.Dispatch)
	cfg.Middleware = append([]runtime.Middleware{m.Middleware()}, cfg.Middleware...)
}

// Attach subscribes m to w's events, which count each attempt's outcome.
func (m *Metrics) Attach(w *runtime.Worker) { w.Subscribe(m.Observe) }

// Dispatch is a runtime.DispatchMiddleware: it stamps delayed jobs with
// their due time and counts the jobs pushed.
func (m *Metrics) Dispatch(ctx context.Context, out *runtime.DispatchCall, next func(context.Context) error) error {
	for _, j := range out.Jobs {
		if j.Delay > 0 {
			h := make(map[string]string, len(j.Envelope.Headers)+1)
			for k, v := range j.Envelope.Headers {
				h[k] = v
			}
			h[DueHeader] = strconv.FormatInt(j.Envelope.DispatchedAt+j.Delay.Milliseconds(), 10)
			j.Envelope.Headers = h
		}
	}
	if err := next(ctx); err != nil {
		return err
	}
	for _, j := range out.Jobs {
		m.dispatched.WithLabelValues(j.Envelope.Queue, j.Envelope.Name).Inc()
	}
	return nil
}

// Middleware returns the worker middleware that observes pickup latency
// and handler duration, and counts busy slots.
func (m *Metrics) Middleware() runtime.Middleware { return runtime.MiddlewareFunc(m.handle) }

func (m *Metrics) handle(ctx context.Context, next func(context.Context) error) error {
	info, ok := runtime.JobInfoFrom(ctx)
	if !ok {
		return next(ctx)
	}
	began := time.Now()
	if ready, ok := m.readyAt(info); ok {
		m.pickup.WithLabelValues(info.Queue, info.Name).Observe(max(began.Sub(ready), 0).Seconds())
	}
	m.mu.Lock()
	m.busy[info.Worker]++
	m.mu.Unlock()
	defer func() {
		m.duration.WithLabelValues(info.Queue, info.Name).Observe(time.Since(began).Seconds())
		m.mu.Lock()
		m.busy[info.Worker]--
		m.mu.Unlock()
	}()
	return next(ctx)
}

// readyAt says when the attempt of info became ready, if known.
func (m *Metrics) readyAt(info runtime.JobInfo) (time.Time, bool) {
	if info.Attempt > 1 {
		m.mu.Lock()
		due, ok := m.due[info.ID]
		delete(m.due, info.ID)
		m.mu.Unlock()
		return due, ok
	}
	if v, ok := info.Headers[DueHeader]; ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			return time.UnixMilli(ms), true
		}
	}
	return info.DispatchedAt, info.DispatchedAt.UnixMilli() > 0 // an envelope with no dispatch time has none
}

// maxDue bounds the release times kept for pickup latency, in case
// releases are picked up by other processes.
const maxDue = 100_000

// Observe is a worker event subscriber that counts each outcome.
func (m *Metrics) Observe(ev runtime.Event) {
	l := []string{ev.Queue, ev.Name}
	switch ev.Kind {
	case runtime.JobProcessed:
		m.processed.WithLabelValues(l...).Inc()
		if ev.ResultSize > 0 {
			m.resultSize.WithLabelValues(l...).Observe(float64(ev.ResultSize))
		}
	case runtime.JobFailed:
		m.failed.WithLabelValues(l...).Inc()
	case runtime.JobTimedOut:
		m.timedOut.WithLabelValues(l...).Inc()
	case runtime.JobCancelled:
		m.cancelled.WithLabelValues(l...).Inc()
	case runtime.JobReleased:
		if errors.Is(ev.Err, runtime.ErrNewerVersion) {
			m.givenBackNewer.WithLabelValues(l...).Inc()
			return
		}
		if ev.Err != nil && !errors.Is(ev.Err, runtime.ErrWorkerStopping) {
			m.retried.WithLabelValues(l...).Inc()
		} else {
			m.released.WithLabelValues(l...).Inc()
		}
		m.mu.Lock()
		if len(m.due) < maxDue {
			m.due[ev.ID] = time.Now().Add(ev.Delay)
		}
		m.mu.Unlock()
	}
}
