package dashboard

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// series is the jobs finished and failed per bucket of Bucket minutes
// over a span, oldest first, the last holding the current minute.
type series struct {
	Span      string
	Bucket    int // minutes
	Processed []int64
	Failed    []int64
	From      time.Time
	// Totals over the span, and the busiest minute.
	TotalProcessed, TotalFailed, Peak int64
}

// newSeries sums counts (of queue, or of every queue if queue is "")
// into n buckets of bucket minutes each, up to now. Buckets begin at
// whole multiples of bucket minutes (a quarter hour at :00, :15…), the
// last holding the current minute, so that a chart of buckets of 15
// minutes changes once a quarter hour when nothing runs, not once a
// minute.
func newSeries(counts []runtime.MinuteCount, queue string, n, bucket int, now time.Time, span string) series {
	b := int64(bucket)
	firstBucket := now.Unix()/60/b - int64(n) + 1
	first := firstBucket * b
	s := series{Span: span, Bucket: bucket, Processed: make([]int64, n), Failed: make([]int64, n), From: time.Unix(first*60, 0)}
	for _, c := range counts {
		if queue != "" && c.Queue != queue {
			continue
		}
		m := c.Minute.Unix() / 60
		i := m/b - firstBucket
		if m < first || i >= int64(n) {
			continue
		}
		s.Processed[i] += c.Processed
		s.Failed[i] += c.Failed
		s.TotalProcessed += c.Processed
		s.TotalFailed += c.Failed
	}
	for i := range s.Processed {
		s.Peak = max(s.Peak, s.Processed[i]+s.Failed[i])
	}
	return s
}

// Ago says how long before now the series begins, "60 min ago" or "24 h
// ago": a clock time would change the page, and so its ETag, every
// minute.
func (s series) Ago() string {
	m := len(s.Processed) * s.Bucket
	if m >= 120 && m%60 == 0 {
		return fmt.Sprintf("%d h ago", m/60)
	}
	return fmt.Sprintf("%d min ago", m)
}

// chartW and chartH are the chart's view box; it stretches to its box.
const chartW, chartH = 600, 100

// Unit names the bucket: "min", "15 min".
func (s series) Unit() string {
	if s.Bucket <= 1 {
		return "min"
	}
	return fmt.Sprintf("%d min", s.Bucket)
}

// SVG draws the series: succeeded and failed jobs stacked, as bars (as
// areas past 120 buckets). Everything in it is a number the dashboard
// computed, so it is built as text.
func (s series) SVG() template.HTML {
	n := len(s.Processed)
	peak := max(s.Peak, 1)
	y := func(v int64) float64 { return chartH - float64(v)/float64(peak)*(chartH-4) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="jobs per minute, %s">`, chartW, chartH, s.Span)
	for _, f := range []float64{0.25, 0.5, 0.75} {
		fmt.Fprintf(&b, `<line class="grid" x1="0" x2="%d" y1="%.1f" y2="%.1f"/>`, chartW, chartH*f, chartH*f)
	}
	w := float64(chartW) / float64(n)
	if n <= 120 {
		for i := range n {
			p, f := s.Processed[i], s.Failed[i]
			if p+f == 0 {
				continue
			}
			x := float64(i)*w + w*0.1
			at := s.From.Add(time.Duration(i*s.Bucket) * time.Minute).Format("15:04")
			fmt.Fprintf(&b, `<g><title>%s: %d processed, %d failed</title>`, at, p, f)
			if p > 0 {
				fmt.Fprintf(&b, `<rect class="ok" x="%.2f" y="%.2f" width="%.2f" height="%.2f"/>`, x, y(p+f), w*0.8, chartH-y(p))
			}
			if f > 0 {
				fmt.Fprintf(&b, `<rect class="bad" x="%.2f" y="%.2f" width="%.2f" height="%.2f"/>`, x, y(f), w*0.8, chartH-y(f))
			}
			b.WriteString(`</g>`)
		}
	} else {
		area := func(class string, v func(i int) int64) {
			fmt.Fprintf(&b, `<path class="%s" d="M0,%d`, class, chartH)
			for i := range n {
				fmt.Fprintf(&b, ` L%.2f,%.2f L%.2f,%.2f`, float64(i)*w, y(v(i)), float64(i+1)*w, y(v(i)))
			}
			fmt.Fprintf(&b, ` L%d,%d Z"/>`, chartW, chartH)
		}
		area("ok", func(i int) int64 { return s.Processed[i] + s.Failed[i] })
		area("bad", func(i int) int64 { return s.Failed[i] })
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
