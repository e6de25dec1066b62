package runtime

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Decoding a job's body names what is wrong with it. A body is decoded
// strictly by default: a key the job's struct does not know, and a field
// that the body should carry but does not, fail the job with a
// *FieldError rather than being skipped or left zero, since either means
// the payload was written by another shape of the struct (a renamed
// field, a type changed under queued jobs). The fast path is msgpack's
// own decoder with unknown keys disallowed, and a look at the map's
// length; only a body that fails, or that has fewer keys than the struct
// has fields, is read a second time to say why.
//
// A job type's generated Register call may loosen this: Lenient (the
// `decode=lenient` key) skips unknown keys and leaves missing fields
// zero, and OptionalKeys names the fields added to the struct since
// jobs were queued (the schema lock records them), which older bodies
// lack.

// wireField is one field of a job struct as msgpack carries it.
type wireField struct {
	key       string       // the wire key: the msgpack tag's name, or the field's name
	path      string       // the Go field, dotted through inlined structs
	typ       reflect.Type // its Go type
	omitEmpty bool         // tagged omitempty: an empty value is left out
}

// wireShape is what a strict decode of one job type checks against.
type wireShape struct {
	job     string // the job's wire name, for messages
	fields  []wireField
	byKey   map[string]int
	lenient bool
	// required are the keys every body must carry: fields not tagged
	// omitempty and not optional.
	required []string
}

// newWireShape reads the msgpack fields of t, a struct type (any other
// type decodes as msgpack says, unchecked).
func newWireShape(job string, t reflect.Type) *wireShape {
	s := &wireShape{job: job, byKey: map[string]int{}}
	if t.Kind() == reflect.Struct {
		s.addFields(t, "")
	}
	for i, f := range s.fields {
		s.byKey[f.key] = i
		if !f.omitEmpty {
			s.required = append(s.required, f.key)
		}
	}
	return s
}

// addFields adds the carried fields of struct t, as msgpack's struct
// codec finds them: exported fields, unless tagged "-", with embedded
// structs that have no name in their tag inlined.
func (s *wireShape) addFields(t reflect.Type, prefix string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("msgpack")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		ft := f.Type
		if f.Anonymous && !slices.Contains(strings.Split(opts, ","), "noinline") {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && !encodesItself(ft) {
				s.addFields(ft, prefix+f.Name+".")
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		s.fields = append(s.fields, wireField{
			key: cmpOr(name, f.Name), path: prefix + f.Name, typ: f.Type,
			omitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty"),
		})
	}
}

// selfEncoders are the interfaces through which msgpack encodes a type
// itself rather than as a struct of fields; it does not inline an
// embedded struct that has one.
var selfEncoders = []reflect.Type{
	reflect.TypeFor[msgpack.CustomEncoder](), reflect.TypeFor[msgpack.Marshaler](),
	reflect.TypeFor[encoding.BinaryMarshaler](), reflect.TypeFor[encoding.TextMarshaler](),
}

func encodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	for _, i := range selfEncoders {
		if t.Implements(i) || p.Implements(i) {
			return true
		}
	}
	return false
}

// optional drops keys from the required ones.
func (s *wireShape) optional(keys []string) {
	s.required = slices.DeleteFunc(s.required, func(k string) bool { return slices.Contains(keys, k) })
}

// decodeStrict decodes body into a T as shape says; a problem comes back
// as a *FieldError, or, for a body that is no msgpack at all, an error
// matching ErrDecode.
func decodeStrict[T any](shape *wireShape, body []byte) (T, error) {
	var v T
	d := getByteDecoder(body)
	d.dec.UsePreallocateValues(true) // as msgpack.Unmarshal
	d.dec.DisallowUnknownFields(!shape.lenient)
	err := d.dec.Decode(&v)
	d.put() // Reset clears the flags
	if err != nil {
		return v, shape.explain(body, err)
	}
	if !shape.lenient && len(shape.required) > 0 {
		if err := shape.checkPresent(body); err != nil {
			return v, err
		}
	}
	return v, nil
}

// checkPresent reports the first required key body lacks. Unknown keys
// were refused already, so a map with as many keys as the struct has
// fields lacks none; only a shorter one is read key by key.
func (s *wireShape) checkPresent(body []byte) error {
	n, keys, ok := mapKeys(body, len(s.fields))
	if !ok || n >= len(s.fields) {
		return nil // no map (nil): msgpack decoded it; a full map lacks nothing
	}
	for _, k := range s.required {
		if !slices.Contains(keys, k) {
			f := s.fields[s.byKey[k]]
			return &FieldError{Job: s.job, Field: f.path, Key: k, Want: f.typ.String(), Problem: ProblemMissing}
		}
	}
	return nil
}

// mapKeys reads the length of the map body holds and, when it is below
// full, its keys. ok is false if body is not a map with string keys.
func mapKeys(body []byte, full int) (n int, keys []string, ok bool) {
	// The length is read from the map's header by hand, so that a full
	// map, the common case, costs no decoder.
	switch {
	case len(body) == 0:
		return 0, nil, false
	case msgpcode.IsFixedMap(body[0]):
		n = int(body[0] & 0x0f)
	case body[0] == msgpcode.Map16 && len(body) >= 3:
		n = int(body[1])<<8 | int(body[2])
	case body[0] == msgpcode.Map32 && len(body) >= 5:
		n = int(body[1])<<24 | int(body[2])<<16 | int(body[3])<<8 | int(body[4])
	default:
		return 0, nil, false
	}
	if n >= full {
		return n, nil, true
	}
	dec := msgpack.NewDecoder(bytes.NewReader(body))
	if _, err := dec.DecodeMapLen(); err != nil {
		return 0, nil, false
	}
	keys = make([]string, 0, n)
	for range n {
		k, err := dec.DecodeString()
		if err != nil {
			return 0, nil, false
		}
		keys = append(keys, k)
		if err := dec.Skip(); err != nil {
			return 0, nil, false
		}
	}
	return n, keys, true
}

// explain turns a failed decode of body into a *FieldError naming the
// key that failed: it reads the body's map key by key and decodes each
// value into its field's type on its own. If no key is to blame (the
// body is no map, or is cut short), it returns cause wrapped.
func (s *wireShape) explain(body []byte, cause error) error {
	dec := msgpack.NewDecoder(bytes.NewReader(body))
	n, err := dec.DecodeMapLen()
	if err == nil && n >= 0 {
		for range n {
			k, err := dec.DecodeString()
			if err != nil {
				break
			}
			raw, err := dec.DecodeRaw()
			if err != nil {
				break
			}
			i, known := s.byKey[k]
			if !known {
				if s.lenient {
					continue
				}
				return &FieldError{Job: s.job, Key: k, Found: wireTypeName(raw), Problem: ProblemUnknown, Known: s.keys()}
			}
			f := s.fields[i]
			if err := msgpack.Unmarshal(raw, reflect.New(f.typ).Interface()); err != nil {
				return &FieldError{Job: s.job, Field: f.path, Key: k, Found: wireTypeName(raw), Want: f.typ.String(), Problem: ProblemType, Err: err}
			}
		}
	}
	return fmt.Errorf("%w: body of %s does not decode: %v", ErrDecode, s.job, cause)
}

// keys lists the wire keys of the struct, in field order.
func (s *wireShape) keys() []string {
	out := make([]string, len(s.fields))
	for i, f := range s.fields {
		out[i] = f.key
	}
	return out
}

// wireTypeName names the msgpack type a value starts with.
func wireTypeName(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	c := raw[0]
	switch {
	case c == msgpcode.Nil:
		return "nil"
	case c == msgpcode.True || c == msgpcode.False:
		return "bool"
	case msgpcode.IsFixedNum(c), c == msgpcode.Int8, c == msgpcode.Int16, c == msgpcode.Int32, c == msgpcode.Int64:
		return "int"
	case c == msgpcode.Uint8, c == msgpcode.Uint16, c == msgpcode.Uint32, c == msgpcode.Uint64:
		return "uint"
	case c == msgpcode.Float:
		return "float32"
	case c == msgpcode.Double:
		return "float64"
	case msgpcode.IsString(c):
		return "string"
	case msgpcode.IsBin(c):
		return "bin"
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		return "array"
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		return "map"
	case msgpcode.IsExt(c):
		return "ext"
	}
	return fmt.Sprintf("code 0x%02x", c)
}
