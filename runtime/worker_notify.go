package runtime

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Notes to running workers. A cancel of a running job and a restart
// broadcast are written to Redis first, where a worker's poll finds them
// (the heartbeat, every RetryAfter/3; the restart mark's GET). Then a
// note goes out on the prefix's notes channel (keys.Notes: pub/sub, a
// shard channel on a Cluster) and tells the workers at once.
//
// A note is only a hint to look now. The worker looks with the calls
// its poll makes: a cancel note has it run the heartbeat's extend of the
// jobs it holds under that queue and ID, which says "cancelled" only if
// the job's state is gone and the failed store holds it, and renews the
// lease of a job under another reservation (a later attempt); a restart
// note has it read the restart mark. So a note lost, repeated, late or
// sent by anyone else changes nothing but how soon the worker acts, and
// the fence of a cancel is the same as the heartbeat's.
//
// One subscription per engine, shared by the engine's running workers:
// its own connection, made when the first worker starts and closed when
// the last one stops. Nothing is sent on the reserve or the ack. When
// the subscription is made, or made again after it broke, every worker
// runs a heartbeat at once and reads the restart mark: what was sent
// while it was down is found then. The poll stays as the last fallback
// (a note sent to a shard that failed over before passing it on).

// The notes. Fields are separated by newlines, which no queue name
// holds; a job ID is the rest of the note.
const (
	noteCancel  = "cancel"  // "cancel\n<queue>\n<job ID>": a running job was cancelled
	noteRestart = "restart" // a restart broadcast (Inspector.RestartWorkers)
)

// notesIdle is how long a subscription may be silent before it is
// pinged; a second silence as long ends it, and it is made again.
const notesIdle = 15 * time.Second

// noteRecheck is when a cancel note that named no job the worker holds
// is looked at again, once: the reply of the reserve that took the job
// may have been on its way when the note came.
const noteRecheck = 200 * time.Millisecond

// notifier is an engine's subscription to its notes, and the workers
// it hands them to.
type notifier struct {
	store   *jobrdb.Store
	channel string

	mu      sync.Mutex
	workers map[*Worker]struct{}
	stop    context.CancelFunc // ends the running loop; nil if none runs
	done    chan struct{}      // closed when that loop has ended
	first   chan struct{}      // closed when that loop's first subscribe was confirmed or failed
}

func newNotifier(store *jobrdb.Store, channel string) *notifier {
	return &notifier{store: store, channel: channel, workers: map[*Worker]struct{}{}}
}

// join hands w the notes from now on, and subscribes if w is the first.
// The channel it returns is closed once the first subscribe has been
// confirmed, or has failed: a worker takes jobs after that, so that a
// cancel of a job it runs finds it listening, unless Redis refused.
func (n *notifier) join(w *Worker) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.workers[w] = struct{}{}
	if n.stop != nil {
		w.notes.put(note{catchUp: true}) // the subscription may be confirmed already
		return n.first
	}
	ctx, stop := context.WithCancel(context.Background())
	n.stop, n.done, n.first = stop, make(chan struct{}), make(chan struct{})
	go n.run(ctx, n.done, n.first, w.log)
	return n.first
}

// leave stops handing w notes, and when w was the last, closes the
// subscription and waits until no call of it is in flight.
func (n *notifier) leave(w *Worker) {
	n.mu.Lock()
	delete(n.workers, w)
	if len(n.workers) > 0 || n.stop == nil {
		n.mu.Unlock()
		return
	}
	stop, done := n.stop, n.done
	n.stop, n.done, n.first = nil, nil, nil
	n.mu.Unlock()
	stop()
	<-done
}

// run keeps the subscription up until ctx ends, making it again after
// an error: 100 ms later at first, then up to 5 s apart.
func (n *notifier) run(ctx context.Context, done, first chan struct{}, log *slog.Logger) {
	defer close(done)
	var once sync.Once
	answered := func() { once.Do(func() { close(first) }) }
	defer answered()
	delay := 100 * time.Millisecond
	var down time.Time
	for {
		sub, err := n.store.Listen(ctx, n.channel)
		if err == nil {
			closeOnStop := context.AfterFunc(ctx, func() { _ = sub.Close() })
			err = n.read(ctx, sub, func() {
				answered()
				if !down.IsZero() {
					log.Info("notes to workers work again; cancels and restarts reach them at once", "after", time.Since(down).Round(time.Millisecond))
					down = time.Time{}
				}
				delay = 100 * time.Millisecond
			})
			closeOnStop()
			_ = sub.Close()
		}
		if ctx.Err() != nil {
			return
		}
		answered()
		if down.IsZero() {
			down = time.Now()
			log.Warn("the subscription to notes to workers failed; making it again. Meanwhile cancels reach running jobs at the heartbeat, within RetryAfter/3", "err", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// read hands the notes of sub to the workers until an error. On each
// confirmation of the subscription, up calls back and every worker
// catches up on what it may have missed.
func (n *notifier) read(ctx context.Context, sub *jobrdb.Notes, up func()) error {
	for {
		got, err := sub.Next(ctx, notesIdle)
		if err != nil {
			return err
		}
		var nt note
		switch {
		case got.Subscribed:
			up()
			nt.catchUp = true
		case got.Text == noteRestart:
			nt.restart = true
		case strings.HasPrefix(got.Text, noteCancel+"\n"):
			q, id, ok := strings.Cut(got.Text[len(noteCancel)+1:], "\n")
			if !ok {
				continue
			}
			nt.cancel = Ref{Queue: q, ID: id}
		default:
			continue // a note of a later version, or not ours
		}
		n.mu.Lock()
		for w := range n.workers {
			w.notes.put(nt)
		}
		n.mu.Unlock()
	}
}

// note is one note for a worker.
type note struct {
	cancel  Ref  // Queue and ID of a cancelled job; no Token
	restart bool // read the restart mark
	catchUp bool // run a heartbeat and read the restart mark
}

// noteBox holds the notes a worker has not acted on yet.
type noteBox struct {
	mu      sync.Mutex
	cancels []Ref
	restart bool
	catchUp bool
	ready   chan struct{} // holds a token while the box is not empty
}

// maxNotes bounds the cancels a box holds; past it the worker catches
// up with a heartbeat instead.
const maxNotes = 1000

func (b *noteBox) put(n note) {
	b.mu.Lock()
	switch {
	case n.catchUp || len(b.cancels) >= maxNotes:
		b.catchUp = true
	case n.restart:
		b.restart = true
	default:
		b.cancels = append(b.cancels, n.cancel)
	}
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

func (b *noteBox) take() (cancels []Ref, restart, catchUp bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cancels, restart, catchUp = b.cancels, b.restart, b.catchUp
	b.cancels, b.restart, b.catchUp = nil, false, false
	return cancels, restart, catchUp
}

// noteLoop acts on the worker's notes until ctx ends, which is after the
// worker's running jobs have ended: a job can be cancelled during the
// grace period too. restarted is the restart mark read at the start.
func (w *Worker) noteLoop(ctx context.Context, restarted int64) {
	var again []Ref // cancels that named no job held, to look at once more
	var recheck <-chan time.Time
	for {
		var cancels []Ref
		var restart, catchUp bool
		select {
		case <-ctx.Done():
			return
		case <-w.notes.ready:
			cancels, restart, catchUp = w.notes.take()
		case <-recheck:
			cancels, again, recheck = again, nil, nil
			w.cancelsNoted(ctx, cancels)
			continue
		}
		if restart || catchUp {
			w.restartNoted(ctx, restarted)
		}
		if catchUp {
			w.beat(ctx)
			continue
		}
		if missed := w.cancelsNoted(ctx, cancels); len(missed) > 0 && len(again) < maxNotes {
			again = append(again, missed...)
			if recheck == nil {
				recheck = time.After(noteRecheck)
			}
		}
	}
}

// cancelsNoted runs the heartbeat's extend of the jobs the worker holds
// under the queues and IDs of cancels, and returns the cancels that
// named none.
func (w *Worker) cancelsNoted(ctx context.Context, cancels []Ref) (missed []Ref) {
	if len(cancels) == 0 {
		return nil
	}
	named := make(map[Ref]bool, len(cancels))
	for _, c := range cancels {
		named[c] = true
	}
	found := make(map[Ref]bool, len(cancels))
	var refs []Ref
	w.mu.Lock()
	for r := range w.active {
		if k := (Ref{Queue: r.Queue, ID: r.ID}); named[k] {
			refs = append(refs, r)
			found[k] = true
		}
	}
	w.mu.Unlock()
	for c := range named {
		if !found[c] {
			missed = append(missed, c)
		}
	}
	if len(refs) > 0 {
		sent := time.Now()
		lost, cancelled, err := w.e.extend(ctx, w.cfg.RetryAfter, refs...)
		w.extended(ctx, refs, lost, cancelled, sent, err)
	}
	return missed
}

// restartNoted stops the worker if the restart mark is later than
// restarted, the one read at its start (Inspector.RestartWorkers).
func (w *Worker) restartNoted(ctx context.Context, restarted int64) {
	if w.stopping() {
		return
	}
	mark, err := w.e.lastRestart(ctx)
	if err == nil && mark > restarted {
		w.log.Info("restart broadcast received")
		w.stop("restart broadcast")
	}
}
