package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// A page that reads every queue (the overview, the failed list and the
// search across queues, the look for older batches, the metrics, the
// Recent page) reads a window of them a request, by name (of their
// partitions, by partitionWindow, where it reads each partition), so that its Redis commands do not grow with
// the number of queues: the window's links step to the queues before
// and after. The request names the window by the index of its first
// queue, from.

// How many queues a request of each page reads. Each is what fits in
// 100 Redis commands with what else the page reads (docs/dashboard.md,
// "What each page costs").
const (
	overviewQueues = 10 // about nine commands a partition (a queue of none counts as one)
	failedQueues   = 10 // about five a queue
	searchQueues   = 5  // about sixteen a partition
	batchQueues    = 3  // about sixteen a partition, and two a batch found
	metricsQueues  = 20 // two a partition, three on a process's first render
	recentQueues   = 10 // about five a partition, of pending jobs
)

// queueWindow says which queues a request read, and links to the others.
type queueWindow struct {
	From, To, Of int    // the queues read, 1-based and inclusive, of how many
	Prev, Next   string // links ("?…") to the windows before and after; "" at the ends
	// Split names the queues of which the window read some partitions
	// only, and which ("q: partitions 1–8 of 16"), on the overview.
	Split string
}

// Partial reports whether the window leaves queues, or partitions of
// one, out.
func (w queueWindow) Partial() bool { return w.From > 1 || w.To < w.Of || w.Split != "" }

// windowOf returns the n queues of queues that r's from names, and the
// window they are. The links keep r's other parameters but its page.
func windowOf(r *http.Request, queues []string, n int) ([]string, queueWindow) {
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	from = min(max(from, 0), max(len(queues)-1, 0))
	from -= from % n // windows begin at multiples of n, so that links agree
	these := queues[from:min(from+n, len(queues))]
	w := queueWindow{From: from + 1, To: from + len(these), Of: len(queues)}
	w.Prev, w.Next = windowLinks(r, from, n, len(queues))
	return these, w
}

// windowLinks are the links to the windows of n before and after the
// one from begins, of a list of length items; "" at the ends. They keep
// r's other parameters but its page.
func windowLinks(r *http.Request, from, n, length int) (prev, next string) {
	link := func(at int) string {
		q := r.URL.Query()
		q.Del("page")
		if at == 0 {
			q.Del("from")
		} else {
			q.Set("from", strconv.Itoa(at))
		}
		if len(q) == 0 {
			return "?"
		}
		return "?" + q.Encode()
	}
	if from > 0 {
		prev = link(max(from-n, 0))
	}
	if from+n < length {
		next = link(from + n)
	}
	return prev, next
}

// queueParts is a queue and the partitions of it a window of the
// overview reads: all of them, or a run of them when the queue has more
// than fit.
type queueParts struct {
	Queue string
	Parts []string // names of the partitions read, for Inspector.PerPartition
	// First is the 1-based number of the first partition read, and Of
	// how many the queue has (1 for a queue of none).
	First, Of int
}

// Whole reports whether every partition of the queue is read.
func (q queueParts) Whole() bool { return len(q.Parts) == q.Of }

// Label is "partitions 1–8 of 16" (or "partition 9 of 9") for a queue
// read in part, "" for one read whole.
func (q queueParts) Label() string {
	if q.Whole() {
		return ""
	}
	if len(q.Parts) == 1 {
		return fmt.Sprintf("partition %d of %d", q.First, q.Of)
	}
	return fmt.Sprintf("partitions %d–%d of %d", q.First, q.First+len(q.Parts)-1, q.Of)
}

// partitionWindow is windowOf for the pages that read each queue's
// partitions (the overview, the search, the look for older batches, the
// metrics, the Recent page), whose window is n partitions rather than n
// queues (a queue of no partitions counts as one), so that their Redis
// commands depend on neither the number of queues nor the number of
// partitions: a queue of more partitions than fit is read over several
// windows, and each says which partitions it read (queueWindow.Split). partsOf returns a queue's
// partitions. from is the index of the window's first partition among
// every queue's, by name, then by partition.
func partitionWindow(r *http.Request, queues []string, partsOf func(string) []string, n int) ([]queueParts, queueWindow) {
	type unit struct {
		queue, part int
		name        string
	}
	var units []unit
	parts := make([][]string, len(queues))
	for qi, q := range queues {
		parts[qi] = partsOf(q)
		for pi, name := range parts[qi] {
			units = append(units, unit{qi, pi, name})
		}
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	from = min(max(from, 0), max(len(units)-1, 0))
	from -= from % n
	these := units[from:min(from+n, len(units))]
	var out []queueParts
	for _, u := range these {
		if len(out) == 0 || out[len(out)-1].Queue != queues[u.queue] {
			out = append(out, queueParts{Queue: queues[u.queue], First: u.part + 1, Of: len(parts[u.queue])})
		}
		out[len(out)-1].Parts = append(out[len(out)-1].Parts, u.name)
	}
	w := queueWindow{From: 1, Of: len(queues)}
	if len(these) > 0 {
		w.From, w.To = these[0].queue+1, these[len(these)-1].queue+1
	}
	var split []string
	for _, q := range out {
		if !q.Whole() {
			split = append(split, q.Queue+": "+q.Label())
		}
	}
	w.Split = strings.Join(split, "; ")
	w.Prev, w.Next = windowLinks(r, from, n, len(units))
	return out, w
}
