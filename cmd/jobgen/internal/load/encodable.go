package load

import (
	"fmt"
	"go/types"
	"reflect"
	"strings"
)

// encoderMethods are the methods through which msgpack encodes a type
// itself (CustomEncoder, Marshaler, encoding.BinaryMarshaler,
// encoding.TextMarshaler); the checker does not look inside such types.
var encoderMethods = []string{"EncodeMsgpack", "MarshalMsgpack", "MarshalBinary", "MarshalText"}

// unencodable is where in a field's type msgpack fails.
type unencodable struct {
	// path is the field path from the job, such as "Meta.Hooks[]".
	path string
	// typ is the type at path.
	typ types.Type
	// why names the kind msgpack rejects, such as "a channel".
	why string
	// lost, if set, replaces "msgpack cannot encode <why>" in the
	// message: what becomes of a value msgpack does encode but that does
	// not arrive as it was sent (lost_in_transit.go). It is a format
	// whose %s is inner.
	lost  string
	inner types.Type
	// fix, if set, replaces carryData as the way forward.
	fix string
}

// carried reports whether msgpack encodes struct field i of st: exported
// and embedded fields are encoded, unless tagged `msgpack:"-"`.
func carried(st *types.Struct, i int) bool {
	f := st.Field(i)
	if !f.Exported() && !f.Embedded() {
		return false
	}
	name, _, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("msgpack"), ",")
	return name != "-"
}

// checkEncodable looks through t, the type of the value at path, for a
// part msgpack cannot encode: channels, funcs, complex numbers, uintptr
// and unsafe.Pointer, through struct fields, pointers, arrays, slices
// and map keys and values; and for a part that does not survive the
// round trip (lost_in_transit.go): a struct with fields but none carried,
// such as sql.DB or sync.Mutex, and an interface other than any and
// error that no type of w.exts implements. It returns nil if there is
// none.
func checkEncodable(t types.Type, path string, w *typeWalk) *unencodable {
	seen := w.seen
	if seen[t] {
		return nil // a recursive type, already being checked
	}
	if named, ok := t.(*types.Named); ok {
		if encodesItself(named) && !types.IsInterface(named) {
			return nil // an interface's values are decoded as lostInterface says
		}
		seen[t] = true
		defer delete(seen, t)
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Kind() == types.UnsafePointer:
			return &unencodable{path: path, typ: t, why: "an unsafe.Pointer"}
		case u.Kind() == types.Uintptr:
			return &unencodable{path: path, typ: t, why: "a uintptr"}
		case u.Info()&types.IsComplex != 0:
			return &unencodable{path: path, typ: t, why: "a complex number"}
		}
	case *types.Chan:
		return &unencodable{path: path, typ: t, why: "a channel"}
	case *types.Signature:
		return &unencodable{path: path, typ: t, why: "a func"}
	case *types.Pointer:
		bad := checkEncodable(u.Elem(), path, w)
		if bad != nil && bad.path == path {
			bad.typ = t // the field's own type, *sql.DB rather than sql.DB
		}
		return bad
	case *types.Slice:
		return checkEncodable(u.Elem(), path+"[]", w)
	case *types.Array:
		return checkEncodable(u.Elem(), path+"[]", w)
	case *types.Map:
		if bad := checkEncodable(u.Key(), path+"[key]", w); bad != nil {
			return bad
		}
		return checkEncodable(u.Elem(), path+"[]", w)
	case *types.Struct:
		if bad := lostStruct(t, u, path); bad != nil {
			return bad
		}
		for i := range u.NumFields() {
			if !carried(u, i) {
				continue
			}
			f := u.Field(i)
			if bad := checkEncodable(f.Type(), joinPath(path, f.Name()), w); bad != nil {
				return bad
			}
		}
	case *types.Interface:
		// Encoded by their dynamic value; see lostInterface.
		return w.lostInterface(t, u, path)
	}
	// Invalid types (from type errors in the package) are the compiler's
	// to report.
	return nil
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// encodesItself reports whether msgpack encodes values of named through
// one of their methods.
func encodesItself(named *types.Named) bool {
	ms := types.NewMethodSet(types.NewPointer(named))
	for _, name := range encoderMethods {
		if ms.Lookup(named.Obj().Pkg(), name) != nil {
			return true
		}
	}
	return false
}

// describe says what is wrong with an unencodable field, and what to
// do instead.
func (u *unencodable) describe(qf types.Qualifier) string {
	what, fix := "msgpack cannot encode "+u.why, carryData
	if u.lost != "" {
		what = fmt.Sprintf(u.lost, types.TypeString(u.inner, qf))
	}
	if u.fix != "" {
		fix = u.fix
	}
	return fmt.Sprintf("field %s has type %s: %s, so it cannot cross a queue; %s", u.path, types.TypeString(u.typ, qf), what, fix)
}
