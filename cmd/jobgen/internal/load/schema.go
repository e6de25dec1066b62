package load

import (
	"cmp"
	"errors"
	"go/ast"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// Wire schemas: the loader reads, for the schema lock, the fields that
// msgpack carries of every job, event and result type, with their wire
// keys and types; and the keys that version a job's schema:
//
//	version=2             the schema's version (1 when unset)
//	upgrade=SendEmailV1   the type holding the previous version's fields,
//	                      with a method Upgrade() SendEmail
//	decode=lenient        skip unknown keys, leave missing fields zero
//	                      (the default, strict, fails such a job)

// schemaSetters adds the setters of the schema keys to m.
func schemaSetters(m map[string]setter) map[string]setter {
	m["version"] = func(a *annotation, value string) error {
		v, err := positiveInt(value)
		a.wire.Version = v
		return err
	}
	m["upgrade"] = func(a *annotation, value string) error {
		if !isIdent(value) {
			return errors.New("want the name of a struct type of this package holding the previous version's fields, such as upgrade=SendEmailV1")
		}
		a.wire.Upgrade = value
		return nil
	}
	m["decode"] = func(a *annotation, value string) error {
		switch value {
		case "strict":
			a.wire.Lenient = false
		case "lenient":
			a.wire.Lenient = true
		default:
			return errors.New("want strict (the default: a body with a key the struct does not know, or without a field, fails the job) or lenient (skip such keys, leave such fields zero)")
		}
		return nil
	}
	return m
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9' || r >= 0x80) {
			return false
		}
	}
	return true
}

// checkUpgrade checks a job's `upgrade=` type: it needs version= of at
// least 2, and must be a struct type of the package with a method
// Upgrade() returning the job.
func (l *loader) checkUpgrade(spec *ast.TypeSpec, job model.Job) {
	pos := l.position(spec.Name.Pos())
	if job.Laravel != "" && job.Wire.Version > 1 {
		// The bridge builds the job from its PHP class's properties, as
		// the struct is now; it has no older body to upgrade.
		l.errs.add(pos, "%s has laravel=%s and version=%d: a Laravel job's shape is its PHP class's, which the bridge maps as the struct is now, so it has no versions; drop version= and upgrade=, and keep the Go fields' php tags on the property names queued jobs carry (docs/changing-jobs.md)", job.TypeName, job.Laravel, job.Wire.Version)
		return
	}
	up := job.Wire.Upgrade
	if up == "" {
		return
	}
	if job.Wire.Version < 2 {
		l.errs.add(pos, "%s has upgrade=%s but no version= above 1; an upgrade leads from the previous version to this one: add version=N, N being one more than the version in %s", job.TypeName, up, model.LockFile)
		return
	}
	obj, ok := l.pkg.Types.Scope().Lookup(up).(*types.TypeName)
	if !ok {
		l.errs.add(pos, "%s has upgrade=%s, but package %s declares no type %s; declare it as a struct with version %d's fields (their wire keys and types as %s records them)", job.TypeName, up, l.pkg.Name, up, job.Wire.Version-1, model.LockFile)
		return
	}
	named, ok := obj.Type().(*types.Named)
	if !ok || !isStruct(named) {
		l.errs.add(l.position(obj.Pos()), "upgrade=%s of %s: %s is not a struct type; declare it as a struct with version %d's fields", up, job.TypeName, up, job.Wire.Version-1)
		return
	}
	sel := types.NewMethodSet(named).Lookup(l.pkg.Types, "Upgrade")
	m, _ := func() (*types.Func, bool) {
		if sel == nil {
			return nil, false
		}
		f, ok := sel.Obj().(*types.Func)
		return f, ok
	}()
	if m == nil {
		l.errs.add(l.position(obj.Pos()), "upgrade=%s of %s: %s has no method Upgrade; add func (old %s) Upgrade() %s, which turns a version %d job into a version %d one", up, job.TypeName, up, up, job.TypeName, job.Wire.Version-1, job.Wire.Version)
		return
	}
	sig := m.Signature()
	res, _ := func() (*types.Named, bool) {
		if sig.Results().Len() != 1 {
			return nil, false
		}
		n, ok := sig.Results().At(0).Type().(*types.Named)
		return n, ok
	}()
	if sig.Params().Len() != 0 || res == nil || res.Obj().Name() != job.TypeName || res.Obj().Pkg() != l.pkg.Types {
		l.errs.add(l.position(m.Pos()), "%s.Upgrade is not Upgrade() %s; give it that signature (value receiver) to upgrade version %d jobs of %s", up, job.TypeName, job.Wire.Version-1, job.TypeName)
	}
}

func isStruct(t types.Type) bool {
	_, ok := t.Underlying().(*types.Struct)
	return ok
}

// wireTypes returns the wire types of p with their schemas: its jobs,
// its events and the result types of its jobs, sorted by type name.
func (l *loader) wireTypes(p *model.Package) []model.WireType {
	var out []model.WireType
	seen := map[string]bool{}
	add := func(kind, typeName, name string, wire model.WireOptions) {
		if seen[typeName] {
			return
		}
		obj, ok := l.pkg.Types.Scope().Lookup(typeName).(*types.TypeName)
		if !ok {
			return
		}
		seen[typeName] = true
		wt := model.WireType{Kind: kind, TypeName: typeName, Name: name, Pos: l.position(obj.Pos()), Wire: wire}
		wt.Fields = l.wireFields(obj.Type())
		if wire.Upgrade != "" {
			if up, ok := l.pkg.Types.Scope().Lookup(wire.Upgrade).(*types.TypeName); ok {
				wt.Upgrade = l.wireFields(up.Type())
			}
		}
		out = append(out, wt)
	}
	for _, j := range p.Jobs {
		add(model.KindJob, j.TypeName, j.Name, j.Wire)
	}
	for _, ev := range p.Events {
		add(model.KindEvent, ev.TypeName, ev.TypeName, model.WireOptions{})
	}
	for _, j := range p.Jobs {
		if j.Result != "" {
			add(model.KindResult, j.Result, j.Result, model.WireOptions{})
		}
	}
	// The package's struct types that those carry, at any depth.
	for i := 0; i < len(out); i++ {
		obj, ok := l.pkg.Types.Scope().Lookup(out[i].TypeName).(*types.TypeName)
		if !ok {
			continue
		}
		for _, name := range l.carriedStructs(obj.Type()) {
			add(model.KindStruct, name, name, model.WireOptions{})
		}
	}
	slices.SortFunc(out, func(a, b model.WireType) int { return cmp.Compare(a.TypeName, b.TypeName) })
	return out
}

// carriedStructs returns the names of the package's struct types that
// the carried fields of t hold, through pointers, slices, arrays and
// maps, that msgpack encodes as structs of fields.
func (l *loader) carriedStructs(t types.Type) []string {
	var out []string
	var walk func(t types.Type, top bool)
	seen := map[types.Type]bool{}
	walk = func(t types.Type, top bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		if n, ok := t.(*types.Named); ok && !top {
			if n.Obj().Pkg() == l.pkg.Types && isStruct(n) && !encodesItself(n) && n.TypeParams().Len() == 0 {
				out = append(out, n.Obj().Name())
			}
			return // its own fields are walked as its own wire type
		}
		switch u := t.Underlying().(type) {
		case *types.Pointer:
			walk(u.Elem(), false)
		case *types.Slice:
			walk(u.Elem(), false)
		case *types.Array:
			walk(u.Elem(), false)
		case *types.Map:
			walk(u.Key(), false)
			walk(u.Elem(), false)
		case *types.Struct:
			for i := range u.NumFields() {
				if carried(u, i) {
					walk(u.Field(i).Type(), false)
				}
			}
		}
	}
	walk(t, true)
	return out
}

// wireFields returns the fields msgpack carries of t: for a struct, its
// exported fields unless tagged "-", embedded structs with no name in
// their tag inlined; for another type, one field with no key.
func (l *loader) wireFields(t types.Type) []model.WireField {
	st, ok := t.Underlying().(*types.Struct)
	if !ok || encodesItselfType(t) {
		return []model.WireField{{Type: l.wireType(t)}}
	}
	var out []model.WireField
	l.structFields(st, "", &out)
	return out
}

func (l *loader) structFields(st *types.Struct, prefix string, out *[]model.WireField) {
	for i := range st.NumFields() {
		f := st.Field(i)
		name, opts, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("msgpack"), ",")
		if name == "-" || !f.Exported() && !f.Embedded() {
			continue
		}
		if f.Embedded() && !slices.Contains(strings.Split(opts, ","), "noinline") {
			ft := f.Type()
			if p, ok := ft.(*types.Pointer); ok {
				ft = p.Elem()
			}
			if inner, ok := ft.Underlying().(*types.Struct); ok && !encodesItselfType(ft) {
				l.structFields(inner, prefix+f.Name()+".", out)
				continue
			}
		}
		if !f.Exported() {
			continue
		}
		*out = append(*out, model.WireField{
			Key: cmp.Or(name, f.Name()), Field: prefix + f.Name(), Type: l.wireType(f.Type()),
			OmitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty"),
			Pos:       l.position(f.Pos()),
		})
	}
}

// wireType writes t as the wire sees it: a named type whose underlying
// type is basic, and which does not encode itself, as that basic type
// (type UserID int64 travels as an int64); any other as Go writes it.
func (l *loader) wireType(t types.Type) string {
	if b, ok := t.Underlying().(*types.Basic); ok && !encodesItselfType(t) {
		return b.Name()
	}
	return types.TypeString(t, l.qualifier())
}

func encodesItselfType(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && encodesItself(n)
}
