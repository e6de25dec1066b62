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
// and map keys and values. It returns nil if there is none.
func checkEncodable(t types.Type, path string, seen map[types.Type]bool) *unencodable {
	if seen[t] {
		return nil // a recursive type, already being checked
	}
	if named, ok := t.(*types.Named); ok {
		if encodesItself(named) {
			return nil
		}
		seen[t] = true
		defer delete(seen, t)
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Kind() == types.UnsafePointer:
			return &unencodable{path, t, "an unsafe.Pointer"}
		case u.Kind() == types.Uintptr:
			return &unencodable{path, t, "a uintptr"}
		case u.Info()&types.IsComplex != 0:
			return &unencodable{path, t, "a complex number"}
		}
	case *types.Chan:
		return &unencodable{path, t, "a channel"}
	case *types.Signature:
		return &unencodable{path, t, "a func"}
	case *types.Pointer:
		return checkEncodable(u.Elem(), path, seen)
	case *types.Slice:
		return checkEncodable(u.Elem(), path+"[]", seen)
	case *types.Array:
		return checkEncodable(u.Elem(), path+"[]", seen)
	case *types.Map:
		if bad := checkEncodable(u.Key(), path+"[key]", seen); bad != nil {
			return bad
		}
		return checkEncodable(u.Elem(), path+"[]", seen)
	case *types.Struct:
		for i := range u.NumFields() {
			if !carried(u, i) {
				continue
			}
			f := u.Field(i)
			if bad := checkEncodable(f.Type(), joinPath(path, f.Name()), seen); bad != nil {
				return bad
			}
		}
	}
	// Interfaces are encoded by their dynamic value; invalid types (from
	// type errors in the package) are the compiler's to report.
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

// describe says what is wrong with an unencodable field.
func (u *unencodable) describe(qf types.Qualifier) string {
	return fmt.Sprintf("field %s has type %s: msgpack cannot encode %s", u.path, types.TypeString(u.typ, qf), u.why)
}
