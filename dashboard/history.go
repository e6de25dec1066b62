package dashboard

import (
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// The History page shows a queue's throughput over time, from the
// per-minute counts the workers write, and each job class's throughput
// and runtimes over time, in ten-minute slots, from the runtime
// histograms of a queue with EngineConfig.KeepFinished. Its spans stop
// at 12 hours so that it reads at most 72 histograms and 13 hashes of
// counts.

// historySpan is a span the History page offers.
type historySpan struct {
	Name   string
	Slots  int // ten-minute slots
	Bucket int // minutes a bar of the throughput chart
}

var historySpans = []historySpan{{"1h", 6, 1}, {"6h", 36, 5}, {"12h", 72, 10}}

// classHistory is one job class on the History page.
type classHistory struct {
	Name       string
	Jobs       series
	Runtimes   template.HTML
	Waits      template.HTML // nil when no wait is known
	Slots      []runtime.ClassSlot
	PeakP95    time.Duration
	PeakWait   time.Duration // the highest p95 wait
	TotalJobs  int64
	Unit, Span string
}

func (h *handler) history(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	queue := q.Get("queue")
	span := historySpans[1]
	for _, s := range historySpans {
		if s.Name == q.Get("span") {
			span = s
		}
	}
	queues, err := h.ins.Queues(ctx)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	if queue == "" && len(queues) > 0 {
		queue = queues[0]
	}
	data := map[string]any{"Queue": queue, "Queues": queues, "Span": span.Name, "Spans": historySpans}
	if queue == "" {
		h.render(w, r, "history", "History", data, true)
		return
	}
	if err := runtime.ValidateQueueName(queue); err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	now := time.Now()
	minutes := span.Slots * 10
	counts, err := h.ins.Metrics(ctx, now.Add(-time.Duration(minutes)*time.Minute))
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	data["Throughput"] = newSeries(counts, queue, minutes/span.Bucket, span.Bucket, now, "last "+span.Name)
	qh, err := h.ins.QueueHistory(ctx, queue, span.Slots)
	if err != nil {
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	// the queue's wait, every class together
	var peakWait time.Duration
	for _, s := range qh.All.Slots {
		peakWait = max(peakWait, s.Wait.P95)
	}
	if peakWait > 0 {
		data["Wait"] = runtimeSVG(qh.All.Slots, func(s runtime.ClassSlot) runtime.ClassMetrics { return s.Wait }, peakWait, "waits of every job class, last "+span.Name)
		data["PeakWait"] = peakWait
	}
	classes := qh.Classes
	views := make([]classHistory, 0, len(classes))
	for _, c := range classes {
		cv := classHistory{Name: c.Name, Slots: c.Slots, Span: "last " + span.Name}
		waited := false
		jobs := series{Span: cv.Span, Bucket: 10, Processed: make([]int64, len(c.Slots)), Failed: make([]int64, len(c.Slots))}
		if len(c.Slots) > 0 {
			jobs.From = c.Slots[0].Start
		}
		for i, s := range c.Slots {
			jobs.Processed[i] = s.Jobs
			jobs.TotalProcessed += s.Jobs
			jobs.Peak = max(jobs.Peak, s.Jobs)
			cv.PeakP95 = max(cv.PeakP95, s.P95)
			cv.PeakWait = max(cv.PeakWait, s.Wait.P95)
			waited = waited || s.Wait.Jobs > 0
		}
		cv.Jobs, cv.TotalJobs = jobs, jobs.TotalProcessed
		cv.Runtimes = runtimeSVG(c.Slots, func(s runtime.ClassSlot) runtime.ClassMetrics { return s.ClassMetrics }, cv.PeakP95, "runtimes, "+cv.Span)
		if waited {
			cv.Waits = runtimeSVG(c.Slots, func(s runtime.ClassSlot) runtime.ClassMetrics { return s.Wait }, cv.PeakWait, "waits, "+cv.Span)
		}
		slices.Reverse(cv.Slots) // the table: newest first
		views = append(views, cv)
	}
	data["Classes"] = views
	h.render(w, r, "history", "History", data, true)
}

// runtimeSVG draws each slot's p50 (bar) and p95 (tick) of the metrics
// pick reads (runtimes or waits). It holds only numbers the dashboard
// computed, and label.
func runtimeSVG(slots []runtime.ClassSlot, pick func(runtime.ClassSlot) runtime.ClassMetrics, peak time.Duration, label string) template.HTML {
	n := max(len(slots), 1)
	top := float64(max(peak, time.Millisecond))
	y := func(d time.Duration) float64 { return chartH - float64(d)/top*(chartH-4) }
	w := float64(chartW) / float64(n)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="%s">`, chartW, chartH, template.HTMLEscapeString(label))
	for i, slot := range slots {
		s := pick(slot)
		if s.Jobs == 0 {
			continue
		}
		x := float64(i)*w + w*0.1
		fmt.Fprintf(&b, `<g><title>%s: p50 %s, p95 %s, %d jobs</title>`, slot.Start.Format("15:04"), duration(s.P50), duration(s.P95), s.Jobs)
		fmt.Fprintf(&b, `<rect class="ok" x="%.2f" y="%.2f" width="%.2f" height="%.2f"/>`, x, y(s.P50), w*0.8, chartH-y(s.P50))
		fmt.Fprintf(&b, `<rect class="bad" x="%.2f" y="%.2f" width="%.2f" height="2"/>`, x, y(s.P95), w*0.8)
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
