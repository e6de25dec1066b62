package lock

import (
	"fmt"
	"go/token"
	"os"
	"slices"
	"strings"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/load"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// change is one breaking change found against the lock.
type change struct {
	pos  token.Position
	what string // what changed, for the message and the lock's record
	why  string // what it would do to queued jobs
	keep string // how to keep the old form, the first way forward
	// versionable: a new version with an upgrade can carry it (not a
	// wire name, which routing goes by).
	versionable bool
}

// Check compares the wire types of p with old, the lock at path, and
// returns the lock to write, having filled in each job's Wire.Optional
// (the keys it added since its version). A breaking change to a type of
// the lock is refused, as a load.List of problems at the changed fields,
// unless the job declares the next version with an upgrade whose type
// matches the lock's version, or accept names the type (by type or wire
// name), which the new lock records.
func Check(p *model.Package, old *File, path string, accept []string) (*File, load.List) {
	c := checker{p: p, old: old, path: path, accept: accept, next: &File{}}
	for _, wt := range p.Wire {
		c.wireType(wt)
	}
	c.removed()
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	for i, j := range p.Jobs {
		if t := c.next.find(j.TypeName); t != nil {
			for _, f := range t.Fields {
				if f.Added && !f.OmitEmpty {
					p.Jobs[i].Wire.Optional = append(p.Jobs[i].Wire.Optional, f.Key)
				}
			}
		}
	}
	return c.next, nil
}

type checker struct {
	p      *model.Package
	old    *File
	path   string
	accept []string
	next   *File
	errs   load.List
}

func (c *checker) refuse(pos token.Position, format string, args ...any) {
	c.errs = append(c.errs, &load.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) accepted(t model.WireType) bool {
	return slices.Contains(c.accept, t.TypeName) || t.Kind == model.KindJob && slices.Contains(c.accept, t.Name)
}

// wireType checks one type against its entry, if it has one, and adds
// its new entry.
func (c *checker) wireType(wt model.WireType) {
	fields := lockFields(wt.Fields)
	version := wt.Wire.SchemaVersion()
	entry := Type{Type: wt.TypeName, Kind: wt.Kind, Version: version, Fields: fields}
	if wt.Kind == model.KindJob {
		entry.Name = wt.Name
	}
	prev := c.old.find(wt.TypeName)
	if prev == nil {
		// New to the lock. A job that arrives versioned records the
		// upgrade type's fields as its previous version.
		if wt.Wire.Upgrade != "" {
			entry.Previous = []Version{{Version: version - 1, Fields: lockFields(wt.Upgrade)}}
		}
		c.next.Types = append(c.next.Types, entry)
		return
	}
	entry.Previous, entry.Accepted = prev.Previous, prev.Accepted
	changes := diff(*prev, wt)
	if version == prev.Version {
		c.checkUpgradeKept(wt, *prev)
	}
	switch {
	case version < prev.Version:
		c.refuse(wt.Pos, "%s: version=%d is below version %d in %s; versions only go up: set version=%d", wt.TypeName, version, prev.Version, model.LockFile, prev.Version)
	case version > prev.Version+1:
		c.refuse(wt.Pos, "%s: version=%d skips versions: %s has version %d, and an upgrade leads from one version to the next; set version=%d", wt.TypeName, version, model.LockFile, prev.Version, prev.Version+1)
	case version == prev.Version+1:
		c.newVersion(wt, *prev, &entry, changes)
	case len(changes) > 0 && c.accepted(wt):
		entry.Fields = carryAdded(prev.Fields, fields)
		what := make([]string, len(changes))
		for i, ch := range changes {
			what[i] = ch.what
		}
		entry.Accepted = append(slices.Clone(entry.Accepted), Break{Version: version, Changes: what})
	case len(changes) > 0:
		for _, ch := range changes {
			c.refuse(ch.pos, "%s", c.message(wt, *prev, ch))
		}
	default:
		entry.Fields = carryAdded(prev.Fields, fields)
	}
	c.next.Types = append(c.next.Types, entry)
}

// newVersion checks a job's move to the next version: it needs an
// upgrade type whose fields are the lock's version's.
func (c *checker) newVersion(wt model.WireType, prev Type, entry *Type, changes []change) {
	if wt.Kind != model.KindJob {
		return
	}
	if wt.Wire.Upgrade == "" {
		c.refuse(wt.Pos, "%s: version=%d needs upgrade=T, T being a struct type with version %d's fields (as %s records them) and a method func (old T) Upgrade() %s, so that workers turn jobs queued as version %d into version %d ones", wt.TypeName, entry.Version, prev.Version, model.LockFile, wt.TypeName, prev.Version, entry.Version)
		return
	}
	for _, ch := range changes {
		if !ch.versionable {
			c.refuse(ch.pos, "%s", c.message(wt, prev, ch))
		}
	}
	up := lockFields(wt.Upgrade)
	if d := fieldsDiff(prev.Fields, up, prev.Version); d != "" {
		c.refuse(wt.Pos, "%s: upgrade=%s must carry version %d's fields as %s records them, to decode jobs queued as version %d, but %s", wt.TypeName, wt.Wire.Upgrade, prev.Version, model.LockFile, prev.Version, d)
		return
	}
	entry.Previous = append(slices.Clone(prev.Previous), Version{Version: prev.Version, Fields: prev.Fields})
}

// checkUpgradeKept checks that a job's upgrade type still carries the
// previous version's fields as the lock records them, once the version
// is locked: it decodes the jobs of that version still queued.
func (c *checker) checkUpgradeKept(wt model.WireType, prev Type) {
	if wt.Wire.Upgrade == "" || len(prev.Previous) == 0 {
		return
	}
	last := prev.Previous[len(prev.Previous)-1]
	if last.Version != prev.Version-1 {
		return
	}
	if d := fieldsDiff(last.Fields, lockFields(wt.Upgrade), last.Version); d != "" {
		c.refuse(wt.Pos, "%s: upgrade=%s must keep version %d's fields as %s records them, to decode jobs queued as version %d, but %s", wt.TypeName, wt.Wire.Upgrade, last.Version, model.LockFile, last.Version, d)
	}
}

// removed refuses the types of the lock that the package no longer has,
// unless accepted.
func (c *checker) removed() {
	for _, t := range c.old.Types {
		if slices.ContainsFunc(c.p.Wire, func(wt model.WireType) bool { return wt.TypeName == t.Type }) {
			continue
		}
		if slices.Contains(c.accept, t.Type) || t.Name != "" && slices.Contains(c.accept, t.Name) {
			continue
		}
		what := fmt.Sprintf("%s %s", t.Kind, t.Type)
		if t.Name != "" {
			what += fmt.Sprintf(" (wire name %q)", t.Name)
		}
		c.refuse(c.lockPos(t.Type), "%s is in %s but no longer in package %s: queued ones would find no handler or fail to decode. Ways forward:\n\t- keep the type until no job that carries it is queued (queue:monitor, queue:failed);\n\t- or accept its removal: jobgen -accept-break=%s, which drops it from %s.", what, model.LockFile, c.p.Path, t.Type, model.LockFile)
	}
}

// lockPos is the position of type name's entry in the lock file.
func (c *checker) lockPos(name string) token.Position {
	pos := token.Position{Filename: c.path}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return pos
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, fmt.Sprintf("{%q: %q,", "type", name)) {
			pos.Line = i + 1
			break
		}
	}
	return pos
}

// message says what changed, what it would do, and the ways forward.
func (c *checker) message(wt model.WireType, prev Type, ch change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (version %d in %s): %s: %s. Ways forward:\n\t- %s;", wt.Kind, wt.TypeName, prev.Version, model.LockFile, ch.what, ch.why, ch.keep)
	if ch.versionable && wt.Kind == model.KindJob {
		fmt.Fprintf(&b, "\n\t- or declare version %d with an upgrade: //job:version=%d upgrade=%sV%d, with type %sV%d a struct holding version %d's fields and func (old %sV%d) Upgrade() %s (docs/changing-jobs.md);",
			prev.Version+1, prev.Version+1, wt.TypeName, prev.Version, wt.TypeName, prev.Version, prev.Version, wt.TypeName, prev.Version, wt.TypeName)
	}
	fmt.Fprintf(&b, "\n\t- or accept the break, and fail the %s: jobgen -accept-break=%s, which %s records.", kindNoun(wt.Kind), wt.TypeName, model.LockFile)
	return b.String()
}

func kindNoun(kind string) string {
	switch kind {
	case model.KindEvent:
		return "listener jobs queued before"
	case model.KindResult:
		return "results stored before"
	case model.KindStruct:
		return "jobs, events and results queued or stored before that carry it"
	}
	return "jobs queued before"
}

// diff lists the breaking changes from prev to wt.
func diff(prev Type, wt model.WireType) []change {
	var out []change
	if wt.Kind == model.KindJob && prev.Name != "" && prev.Name != wt.Name {
		out = append(out, change{
			pos:  wt.Pos,
			what: fmt.Sprintf("its wire name is now %q, was %q", wt.Name, prev.Name),
			why:  "jobs queued under the old name would find no handler",
			keep: fmt.Sprintf("keep the old wire name: //job:name=%s", prev.Name),
		})
	}
	byKey := map[string]model.WireField{}
	byField := map[string]model.WireField{}
	for _, f := range wt.Fields {
		byKey[f.Key] = f
		byField[f.Field] = f
	}
	for _, old := range prev.Fields {
		f, ok := byKey[old.Key]
		switch {
		case ok && f.Type == old.Type:
		case ok && widens(old.Type, f.Type):
		case ok:
			out = append(out, change{
				pos:         f.Pos,
				what:        fmt.Sprintf("field %s (wire key %q) is now %s, was %s", f.Field, f.Key, f.Type, old.Type),
				why:         "queued bodies hold the old type and would fail to decode",
				keep:        fmt.Sprintf("keep the field's type %s, and carry the new one in a new field with a new key", old.Type),
				versionable: true,
			})
		case byField[old.Field].Key != "" && old.Field != "":
			nf := byField[old.Field]
			out = append(out, change{
				pos:         nf.Pos,
				what:        fmt.Sprintf("field %s's wire key is now %q, was %q", nf.Field, nf.Key, old.Key),
				why:         fmt.Sprintf("queued bodies carry %q, which the struct no longer knows, and lack %q", old.Key, nf.Key),
				keep:        fmt.Sprintf("keep the old key with a tag: %s %s `msgpack:%q`", nf.Field, nf.Type, old.Key),
				versionable: true,
			})
		case renamedTo(prev, wt, old).Key != "":
			nf := renamedTo(prev, wt, old)
			out = append(out, change{
				pos:         nf.Pos,
				what:        fmt.Sprintf("field %s (wire key %q) is gone and field %s (wire key %q) of the same type is new, so it was renamed", old.Field, old.Key, nf.Field, nf.Key),
				why:         fmt.Sprintf("queued bodies carry %q, which the struct no longer knows, and lack %q", old.Key, nf.Key),
				keep:        fmt.Sprintf("keep the old key with a tag: %s %s `msgpack:%q`", nf.Field, nf.Type, old.Key),
				versionable: true,
			})
		default:
			out = append(out, change{
				pos:         wt.Pos,
				what:        fmt.Sprintf("field %s (wire key %q, %s) is removed", cmpOr(old.Field, old.Key), old.Key, old.Type),
				why:         fmt.Sprintf("queued bodies carry %q, which the struct no longer knows", old.Key),
				keep:        fmt.Sprintf("keep the field (a Go field of another name may keep the key with a tag: `msgpack:%q`)", old.Key),
				versionable: true,
			})
		}
	}
	return out
}

// renamedTo returns the field of wt that old was likely renamed to: the
// only field new to it of old's type, when old is the only field of
// that type gone; the zero field if there is none.
func renamedTo(prev Type, wt model.WireType, old Field) model.WireField {
	var gone, added []model.WireField
	for _, f := range wt.Fields {
		if f.Type == old.Type && !slices.ContainsFunc(prev.Fields, func(p Field) bool { return p.Key == f.Key }) {
			added = append(added, f)
		}
	}
	for _, p := range prev.Fields {
		if p.Type == old.Type && !slices.ContainsFunc(wt.Fields, func(f model.WireField) bool { return f.Key == p.Key }) {
			gone = append(gone, model.WireField{Key: p.Key})
		}
	}
	if len(added) == 1 && len(gone) == 1 {
		return added[0]
	}
	return model.WireField{}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// intWidths are the bits of the integer types; int and uint are taken
// as 64, as msgpack carries them.
var intWidths = map[string]int{
	"int8": 8, "int16": 16, "int32": 32, "int64": 64, "int": 64,
	"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "uint": 64,
}

// widens reports whether a body written with type from decodes into to
// without loss: a wider integer of the same sign, an unsigned one into a
// wider signed one, or float32 into float64.
func widens(from, to string) bool {
	if from == "float32" && to == "float64" {
		return true
	}
	fw, fok := intWidths[from]
	tw, tok := intWidths[to]
	if !fok || !tok {
		return false
	}
	fu, tu := strings.HasPrefix(from, "u"), strings.HasPrefix(to, "u")
	switch {
	case fu == tu:
		return tw >= fw
	case fu && !tu:
		return tw > fw
	}
	return false
}

// fieldsDiff says how got's keys and types differ from want's, or "".
func fieldsDiff(want, got []Field, version int) string {
	var out []string
	for _, w := range want {
		i := slices.IndexFunc(got, func(g Field) bool { return g.Key == w.Key })
		switch {
		case i < 0:
			out = append(out, fmt.Sprintf("it has no field with wire key %q (%s)", w.Key, w.Type))
		case got[i].Type != w.Type:
			out = append(out, fmt.Sprintf("its field %s (wire key %q) is %s, not %s", got[i].Field, w.Key, got[i].Type, w.Type))
		}
	}
	for _, g := range got {
		if !slices.ContainsFunc(want, func(w Field) bool { return w.Key == g.Key }) {
			out = append(out, fmt.Sprintf("its field %s (wire key %q) is not among version %d's fields", g.Field, g.Key, version))
		}
	}
	return strings.Join(out, "; ")
}

// lockFields turns the model's fields into the lock's.
func lockFields(fs []model.WireField) []Field {
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = Field{Key: f.Key, Field: f.Field, Type: f.Type, OmitEmpty: f.OmitEmpty}
	}
	return out
}

// carryAdded marks in next the fields that prev marked added, and those
// new to it.
func carryAdded(prev, next []Field) []Field {
	for i := range next {
		j := slices.IndexFunc(prev, func(p Field) bool { return p.Key == next[i].Key })
		next[i].Added = j < 0 || prev[j].Added
	}
	return next
}
