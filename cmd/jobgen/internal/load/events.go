package load

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"time"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// Events and listeners: `//job:event` marks an event type, whose fields
// its listeners' jobs carry; `//job:listen=Event` marks a listener, with
// the job keys for its queued jobs, or `sync` to run inside Fire.

// foundListener is a listener with the position of its type name.
type foundListener struct {
	l   model.Listener
	pos token.Position
}

// eventKeys and syncKeys are the keys an event and a synchronous listener
// take; a queued listener takes every job key but laravel, unique_for
// and the debounce keys.
var (
	eventKeys = []string{"event"}
	syncKeys  = []string{"listen", "name", "sync"}
)

// event checks one `//job:event` type; it reports whether it is sound.
func (l *loader) event(spec *ast.TypeSpec, a annotation) bool {
	before := len(l.errs)
	pos := l.position(spec.Name.Pos())
	if extra := otherKeys(a, eventKeys); len(extra) > 0 {
		l.errs.add(pos, "event %s takes no keys but event (it has %s): an event is not queued itself; set queue, tries and the rest on its listeners", spec.Name.Name, strings.Join(extra, ", "))
	}
	named, st, ok := l.structType(spec, "event")
	if !ok {
		return false
	}
	l.checkFields(pos, spec.Name.Name, st, model.EventMethods, "event")
	l.checkOwnMethods(named, model.EventMethods, "event")
	return len(l.errs) == before
}

// listener checks one `//job:listen=` type and returns it; ok is false if
// it has problems, which are recorded.
func (l *loader) listener(spec *ast.TypeSpec, a annotation) (model.Listener, bool) {
	before := len(l.errs)
	pos := l.position(spec.Name.Pos())
	name := spec.Name.Name
	li := model.Listener{TypeName: name, Name: a.name, Event: a.listen, Options: a.opts, Sync: a.sync}
	if li.Name == "" {
		li.Name = l.pkg.Name + "." + name
	}
	switch {
	case a.listen == "":
		l.errs.add(pos, "%s is sync but listens to nothing; add listen=Event", name)
	case a.sync:
		if extra := otherKeys(a, syncKeys); len(extra) > 0 {
			l.errs.add(pos, "listener %s is sync: it runs inside Fire, not as a queued job, so %s does not apply; drop it, or drop sync", name, strings.Join(extra, ", "))
		}
	default:
		for _, k := range []string{"laravel", "result", "needs", "unique_for", "debounce", "debounce_key", "debounce_max_wait", "version", "upgrade", "decode"} {
			if a.seen[k] {
				l.errs.add(pos, "listener %s may not set %s: %s", name, k, map[string]string{
					"laravel":           "a listener's job is no PHP job class",
					"result":            "nobody awaits a listener's job: Fire returns no job IDs",
					"needs":             "a listener's job carries its event and runs when it is fired, not as a step of a workflow",
					"unique_for":        "an event's listener jobs are pushed in one atomic call, and a unique lock would be a second",
					"debounce":          "an event's listener jobs are pushed in one atomic call, and a burst is kept per dispatch",
					"debounce_key":      "an event's listener jobs are not debounced",
					"debounce_max_wait": "an event's listener jobs are not debounced",
					"version":           "a listener's job carries its event, whose schema the lock covers as the event's; events have no versions",
					"upgrade":           "a listener's job carries its event, whose schema the lock covers as the event's; events have no versions",
					"decode":            "a listener's job carries its event, decoded strictly",
				}[k])
			}
		}
	}
	named, st, ok := l.structType(spec, "listener")
	if !ok {
		return li, false
	}
	if st.NumFields() > 0 {
		l.errs.add(pos, "listener %s has fields; its job carries only the event, so put what its handler needs on the value you pass to Register", name)
	}
	l.checkOwnMethods(named, model.ListenerMethods, "listener")
	return li, len(l.errs) == before
}

// checkOwnMethods reports methods of named that clash with methods, the
// methods generated on every type of its kind (what).
func (l *loader) checkOwnMethods(named *types.Named, methods []string, what string) {
	for i := range named.NumMethods() {
		m := named.Method(i)
		if slices.Contains(methods, m.Name()) {
			l.errs.add(l.position(m.Pos()), "method %s.%s clashes with the method of that name that jobgen generates on every %s; rename it", named.Obj().Name(), m.Name(), what)
		}
	}
}

// otherKeys lists the keys a sets that are not among allowed, sorted.
func otherKeys(a annotation, allowed []string) []string {
	var out []string
	for k := range a.seen {
		if !slices.Contains(allowed, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// linkListeners attaches each sound listener to its event, reporting a
// listener of an event the package does not declare, and queued
// listeners of one event that do not share a queue, connection and
// delay (Fire pushes them in one atomic call). Listeners named in dup
// have a duplicate wire name, already reported.
func (l *loader) linkListeners(p *model.Package, events map[string]*model.Event, listeners []foundListener, dup map[string]bool) {
	slices.SortFunc(listeners, func(a, b foundListener) int { return cmp.Compare(a.l.TypeName, b.l.TypeName) })
	first := map[string]foundListener{} // the first queued listener of each event
	for _, f := range listeners {
		ev := events[f.l.Event]
		if ev == nil {
			l.errs.add(f.pos, "listener %s listens to %s, which is not a //job:event type of package %s", f.l.TypeName, f.l.Event, l.pkg.Name)
			continue
		}
		if dup[f.l.TypeName] {
			continue
		}
		if !f.l.Sync {
			if prev, ok := first[ev.TypeName]; !ok {
				first[ev.TypeName] = f
			} else if msg := sameCall(prev.l, f.l); msg != "" {
				l.errs.add(f.pos, "listener %s of %s %s (%s); the queued listeners of one event are pushed in one atomic call, so they must share queue, connection and delay", f.l.TypeName, ev.TypeName, msg, shortPos(prev.pos))
				continue
			}
		}
		ev.Listeners = append(ev.Listeners, f.l)
		p.Listeners = append(p.Listeners, f.l)
	}
	for _, ev := range events {
		p.Events = append(p.Events, *ev)
	}
	slices.SortFunc(p.Events, func(a, b model.Event) int { return cmp.Compare(a.TypeName, b.TypeName) })
}

// sameCall says how queued listener b differs from a in queue,
// connection or delay; "" if it does not.
func sameCall(a, b model.Listener) string {
	q := func(o model.Options) string { return cmp.Or(o.Queue, "default") }
	switch {
	case q(a.Options) != q(b.Options):
		return fmt.Sprintf("goes to queue %s, but %s to queue %s", q(b.Options), a.TypeName, q(a.Options))
	case a.Options.Connection != b.Options.Connection:
		return fmt.Sprintf("uses connection %q, but %s connection %q", b.Options.Connection, a.TypeName, a.Options.Connection)
	case a.Options.Delay != b.Options.Delay:
		return fmt.Sprintf("has delay %v, but %s delay %v", b.Options.Delay, a.TypeName, time.Duration(a.Options.Delay))
	}
	return ""
}
