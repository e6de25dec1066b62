package notes

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jobgen/jobgen/internal/rdb"
)

// Listener makes a subscription to a channel: *rdb.Store is one.
type Listener interface {
	Listen(ctx context.Context, channel string) (*rdb.Notes, error)
}

// Hub is an engine's subscription to its notes, and the boxes of the
// workers it hands them to. It is safe for concurrent use.
type Hub struct {
	store   Listener
	channel string

	mu    sync.Mutex
	boxes map[*Box]struct{}
	stop  context.CancelFunc // ends the running loop; nil if none runs
	done  chan struct{}      // closed when that loop has ended
	first chan struct{}      // closed when that loop's first subscribe was confirmed or failed
}

// NewHub returns a hub of the notes on channel, which subscribes
// through store when a first box joins.
func NewHub(store Listener, channel string) *Hub {
	return &Hub{store: store, channel: channel, boxes: map[*Box]struct{}{}}
}

// Join hands b the notes from now on, and subscribes if b is the first,
// logging to log what becomes of the subscription. The channel it
// returns is closed once the first subscribe has been confirmed, or has
// failed: a worker takes jobs after that, so that a cancel of a job it
// runs finds it listening, unless Redis refused.
func (h *Hub) Join(b *Box, log *slog.Logger) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.boxes[b] = struct{}{}
	if h.stop != nil {
		b.Put(Note{CatchUp: true}) // the subscription may be confirmed already
		return h.first
	}
	ctx, stop := context.WithCancel(context.Background())
	h.stop, h.done, h.first = stop, make(chan struct{}), make(chan struct{})
	go h.run(ctx, h.done, h.first, log)
	return h.first
}

// Leave stops handing b notes, and when b was the last, closes the
// subscription and waits until no call of it is in flight.
func (h *Hub) Leave(b *Box) {
	h.mu.Lock()
	delete(h.boxes, b)
	if len(h.boxes) > 0 || h.stop == nil {
		h.mu.Unlock()
		return
	}
	stop, done := h.stop, h.done
	h.stop, h.done, h.first = nil, nil, nil
	h.mu.Unlock()
	stop()
	<-done
}

// run keeps the subscription up until ctx ends, making it again after
// an error: 100 ms later at first, then up to 5 s apart.
func (h *Hub) run(ctx context.Context, done, first chan struct{}, log *slog.Logger) {
	defer close(done)
	var once sync.Once
	answered := func() { once.Do(func() { close(first) }) }
	defer answered()
	delay := 100 * time.Millisecond
	var down time.Time
	for {
		sub, err := h.store.Listen(ctx, h.channel)
		if err == nil {
			closeOnStop := context.AfterFunc(ctx, func() { _ = sub.Close() })
			err = h.read(ctx, sub, func() {
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

// read hands the notes of sub to the boxes until an error. On each
// confirmation of the subscription, up calls back and every box gets a
// note to catch up on what it may have missed.
func (h *Hub) read(ctx context.Context, sub *rdb.Notes, up func()) error {
	for {
		got, err := sub.Next(ctx, Idle)
		if err != nil {
			return err
		}
		var nt Note
		if got.Subscribed {
			up()
			nt.CatchUp = true
		} else if n, ok := parse(got.Text); ok {
			nt = n
		} else {
			continue // a note of a later version, or not ours
		}
		h.mu.Lock()
		for b := range h.boxes {
			b.Put(nt)
		}
		h.mu.Unlock()
	}
}
