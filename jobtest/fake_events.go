package jobtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jobgen/jobgen/runtime"
)

// Fired is one recorded event.
type Fired struct {
	// Event is the fired event.
	Event any
	// Listeners are the jobs of its queued listeners
	// (runtime.ListenerJob values), also recorded as dispatches; Sync
	// are those of its synchronous listeners, which the fake does not
	// run.
	Listeners []runtime.Job
	Sync      []runtime.Job
}

// DispatchEvent records p and, as dispatches, its queued listeners' jobs;
// it implements runtime.EventDispatcher. No listener runs, synchronous
// ones included (Laravel's Event::fake). If one listener's job would be
// refused, nothing is recorded.
func (f *Fake) DispatchEvent(ctx context.Context, p *runtime.PendingEvent) ([]string, error) {
	for _, pd := range p.Queued() {
		if err := f.check(pd); err != nil {
			return nil, err
		}
	}
	rec := Fired{Event: p.Event(), Sync: p.SyncListeners()}
	ids := make([]string, len(p.Queued()))
	for i, pd := range p.Queued() {
		id, err := f.Dispatch(ctx, pd)
		if err != nil {
			return nil, err // not reached: checked above
		}
		ids[i] = id
		rec.Listeners = append(rec.Listeners, unwrap(pd.Job()))
	}
	f.mu.Lock()
	f.events = append(f.events, rec)
	f.mu.Unlock()
	return ids, nil
}

// check returns the error the engine would refuse p with, as Dispatch
// does.
func (f *Fake) check(p *runtime.PendingDispatch) error {
	if _, err := p.Envelope(); err != nil {
		return err
	}
	return runtime.ValidateQueueName(p.Queue())
}

// DispatchMany records each job of b as a dispatch; it implements
// runtime.ManyDispatcher. A job the engine would refuse is reported in a
// *runtime.DispatchManyError and not recorded; the others are.
func (f *Fake) DispatchMany(ctx context.Context, b *runtime.PendingMany) ([]string, error) {
	ids := make([]string, b.Len())
	var be *runtime.DispatchManyError
	for i := range ids {
		id, err := f.Dispatch(ctx, b.Pending(i))
		if err != nil {
			if be == nil {
				be = &runtime.DispatchManyError{Errs: make([]error, b.Len())}
			}
			be.Errs[i] = err
		}
		ids[i] = id
	}
	if be != nil {
		return ids, be
	}
	return ids, nil
}

// Events returns the events f recorded, in order.
func (f *Fake) Events() []Fired {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Fired(nil), f.events...)
}

// FiredEvents returns the recorded events of type E, in order.
func FiredEvents[E any](f *Fake) []E {
	var out []E
	for _, ev := range f.Events() {
		if e, ok := ev.Event.(E); ok {
			out = append(out, e)
		}
	}
	return out
}

// AssertFired fails t unless an event of type E was fired that satisfies
// every match (any event of type E if none is given). The jobs of its
// queued listeners are dispatches, for AssertDispatched with
// runtime.ListenerJob[Listener, E].
func AssertFired[E any](t testing.TB, f *Fake, match ...func(E) bool) bool {
	t.Helper()
	for _, e := range FiredEvents[E](f) {
		ok := true
		for _, m := range match {
			if !m(e) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	t.Errorf("jobtest: no %s was fired%s; fired: %s", typeName[E](), predicateNote(len(match)), eventSummary(f))
	return false
}

// AssertNotFired fails t if an event of type E that satisfies every
// match was fired.
func AssertNotFired[E any](t testing.TB, f *Fake, match ...func(E) bool) bool {
	t.Helper()
	n := 0
	for _, e := range FiredEvents[E](f) {
		ok := true
		for _, m := range match {
			ok = ok && m(e)
		}
		if ok {
			n++
		}
	}
	if n > 0 {
		t.Errorf("jobtest: %s was fired %d times%s, want none", typeName[E](), n, predicateNote(len(match)))
		return false
	}
	return true
}

func eventSummary(f *Fake) string {
	evs := f.Events()
	if len(evs) == 0 {
		return "nothing"
	}
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = fmt.Sprintf("%+v", e.Event)
	}
	return strings.Join(s, ", ")
}
