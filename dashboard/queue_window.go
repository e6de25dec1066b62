package dashboard

import (
	"net/http"
	"strconv"
)

// A page that reads every queue (the overview, the failed list and the
// search across queues, the look for older batches) reads a window of
// them a request, by name, so that its Redis commands do not grow with
// the number of queues: the window's links step to the queues before
// and after. The request names the window by the index of its first
// queue, from.

// How many queues a request of each page reads. Each is what fits in
// 100 Redis commands with what else the page reads (docs/dashboard.md,
// "What each page costs").
const (
	overviewQueues = 10 // about nine commands a queue
	failedQueues   = 10 // about five a queue
	searchQueues   = 5  // about sixteen a queue
	batchQueues    = 3  // about sixteen a queue, and two a batch found
	metricsQueues  = 20 // two a queue, three on a process's first render
)

// queueWindow says which queues a request read, and links to the others.
type queueWindow struct {
	From, To, Of int    // the queues read, 1-based and inclusive, of how many
	Prev, Next   string // links ("?…") to the windows before and after; "" at the ends
}

// Partial reports whether the window leaves queues out.
func (w queueWindow) Partial() bool { return w.From > 1 || w.To < w.Of }

// windowOf returns the n queues of queues that r's from names, and the
// window they are. The links keep r's other parameters but its page.
func windowOf(r *http.Request, queues []string, n int) ([]string, queueWindow) {
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	from = min(max(from, 0), max(len(queues)-1, 0))
	from -= from % n // windows begin at multiples of n, so that links agree
	these := queues[from:min(from+n, len(queues))]
	w := queueWindow{From: from + 1, To: from + len(these), Of: len(queues)}
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
		w.Prev = link(max(from-n, 0))
	}
	if from+n < len(queues) {
		w.Next = link(from + n)
	}
	return these, w
}
