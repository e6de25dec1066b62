package laravel

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"unicode"

	"github.com/jobgen/jobgen/laravel/phpserial"
)

// ErrUnmappable is matched (errors.Is) by the error of a PHP value that
// the Go side cannot take over: a closure, an Eloquent model
// (ModelIdentifier), a chain the Go side does not know, or a value that
// does not fit its Go field.
var ErrUnmappable = errors.New("laravel: job cannot be mapped between PHP and Go")

// refused are PHP classes whose objects never map to Go values.
var refused = map[string]string{
	`Illuminate\Contracts\Database\ModelIdentifier`:   "an Eloquent model (SerializesModels stores it as a ModelIdentifier, which only the app's database can restore)",
	`Laravel\SerializableClosure\SerializableClosure`: "a closure",
	`Illuminate\Queue\SerializableClosure`:            "a closure",
	`Opis\Closure\SerializableClosure`:                "a closure",
	`Illuminate\Queue\CallQueuedClosure`:              "a queued closure",
}

// field is one Go struct field and the PHP property it maps to.
type field struct {
	index    []int
	php      string
	vis      phpserial.Visibility
	declarer bool // private: declared by the job's own class
	optional bool // the job's object may lack the property
}

// fieldsOf lists the exported fields of struct type t. The tag
// `php:"name"` names the property, `php:"name,protected"` or
// `php:"name,private"` gives its visibility (default public),
// `php:"name,optional"` lets a job's object lack the property (an
// uninitialized typed property, which serialize() leaves out), and
// `php:"-"` leaves the field out; untagged, the property is the field's
// name with its leading capitals lowered (UserID -> userID, Email ->
// email, URL -> url).
func fieldsOf(t reflect.Type) ([]field, error) {
	var out []field
	seen := map[string]string{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		f := field{index: sf.Index, php: lowerFirst(sf.Name)}
		if tag, ok := sf.Tag.Lookup("php"); ok {
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if name != "" {
				f.php = name
			}
			for opt := range strings.SplitSeq(opts, ",") {
				switch opt {
				case "":
				case "protected":
					f.vis = phpserial.Protected
				case "private":
					f.vis, f.declarer = phpserial.Private, true
				case "optional":
					f.optional = true
				default:
					return nil, fmt.Errorf("%w: %s.%s: php tag option %q: want protected, private or optional", ErrUnmappable, t, sf.Name, opt)
				}
			}
		}
		if prev, ok := seen[f.php]; ok {
			return nil, fmt.Errorf("%w: %s: fields %s and %s both map to PHP property $%s", ErrUnmappable, t, prev, sf.Name, f.php)
		}
		seen[f.php] = sf.Name
		out = append(out, f)
	}
	return out, nil
}

// lowerFirst lowers the leading capitals of a Go name, all but the last
// when a lower-case letter follows (URLPath -> urlPath): UserID ->
// userID, Email -> email, URL -> url.
func lowerFirst(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	if n > 1 && n < len(r) {
		n--
	}
	for i := range n {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}

// fromPHP turns a decoded serialize() tree into Go values, resolving
// back-references against root.
type fromPHP struct {
	root any
	st   *convState
}

// convState is what one conversion counts as it goes.
type convState struct {
	// depth counts the values being converted, one inside another: a
	// back-reference can make a PHP array contain itself.
	depth int
	// index numbers root's values, built at the first reference.
	index *phpserial.Index
	// repeated counts the values gone through by way of references.
	repeated int
}

// maxDepth bounds the nesting of a conversion.
const maxDepth = 256

// maxRepeated bounds the values a conversion goes through by way of
// references. PHP shares a referenced value; Go gets a copy at each
// place, so references to references can make a few hundred bytes of
// serialize() stand for billions of values (each level an array of two
// R: to the level before it).
const maxRepeated = 1 << 18

func (d fromPHP) enter(path string) error {
	d.st.depth++
	if d.st.depth > maxDepth {
		return fmt.Errorf("%w: %s: nested deeper than %d (a value that contains itself?)", ErrUnmappable, path, maxDepth)
	}
	return nil
}

func (d fromPHP) leave() { d.st.depth-- }

func (d fromPHP) resolve(v any, path string) (any, error) {
	for range 64 {
		var n int
		switch r := v.(type) {
		case phpserial.Ref:
			n = int(r)
		case phpserial.RefVar:
			n = int(r)
		default:
			return v, nil
		}
		if d.st.index == nil {
			d.st.index = phpserial.NewIndex(d.root)
		}
		var size int
		var ok bool
		if v, size, ok = d.st.index.Value(n); !ok {
			return nil, fmt.Errorf("%w: reference to value %d, which does not exist", ErrUnmappable, n)
		}
		if d.st.repeated += size; d.st.repeated > maxRepeated {
			return nil, fmt.Errorf("%w: %s: references repeat more than %d values (references to references, each level doubling?)", ErrUnmappable, path, maxRepeated)
		}
	}
	return nil, fmt.Errorf("%w: references nest too deep", ErrUnmappable)
}

// object fills the struct dst from a PHP object's properties, by name,
// whatever their visibility; properties with no field are ignored. With
// strict, a property a field maps that o lacks, unless the field is
// optional, is refused: the class renamed or removed it while the job
// waited, and a zero field would run the handler on a value nobody
// sent. Nested objects and arrays are not strict: PHP arrays leave
// keys out as a matter of course.
func (d fromPHP) object(o *phpserial.Object, dst reflect.Value, strict bool) error {
	fields, err := fieldsOf(dst.Type())
	if err != nil {
		return err
	}
	if strict {
		for _, f := range fields {
			if _, ok := o.Get(f.php); !ok && !f.optional {
				return missingProperty(o, dst.Type(), f)
			}
		}
	}
	for _, f := range fields {
		v, ok := o.Get(f.php)
		if !ok {
			continue
		}
		if err := d.value(v, dst.FieldByIndex(f.index), "$"+f.php); err != nil {
			return err
		}
	}
	return nil
}

func (d fromPHP) value(v any, dst reflect.Value, path string) error {
	if err := d.enter(path); err != nil {
		return err
	}
	defer d.leave()
	v, err := d.resolve(v, path)
	if err != nil {
		return err
	}
	if o, ok := v.(*phpserial.Object); ok {
		if why, ok := refused[o.Class]; ok {
			return fmt.Errorf("%w: %s is %s", ErrUnmappable, path, why)
		}
	}
	if v == nil {
		dst.Set(reflect.Zero(dst.Type()))
		return nil
	}
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		if err := d.value(v, p.Elem(), path); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.Interface:
		return d.iface(v, dst, path)
	case reflect.Slice:
		return d.slice(v, dst, path)
	case reflect.Map:
		return d.mapOf(v, dst, path)
	case reflect.Struct:
		return d.structOf(v, dst, path)
	}
	return setScalar(v, dst, path)
}

// misfit is the error of PHP value v that does not fit dst.
func misfit(v any, dst reflect.Value, path string) error {
	return fmt.Errorf("%w: %s: PHP %s does not fit Go %s", ErrUnmappable, path, phpType(v), dst.Type())
}

// setScalar sets a bool, number or string dst from the resolved, non-null
// PHP value v.
func setScalar(v any, dst reflect.Value, path string) error {
	switch dst.Kind() {
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return misfit(v, dst, path)
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(int64)
		if !ok || dst.OverflowInt(n) {
			return misfit(v, dst, path)
		}
		dst.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(int64)
		if !ok || n < 0 || dst.OverflowUint(uint64(n)) {
			return misfit(v, dst, path)
		}
		dst.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		switch n := v.(type) {
		case float64:
			dst.SetFloat(n)
		case int64:
			dst.SetFloat(float64(n))
		default:
			return misfit(v, dst, path)
		}
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return misfit(v, dst, path)
		}
		dst.SetString(s)
	default:
		return fmt.Errorf("%w: %s: Go %s has no PHP counterpart", ErrUnmappable, path, dst.Type())
	}
	return nil
}

// iface sets a dst of type any to v's generic form.
func (d fromPHP) iface(v any, dst reflect.Value, path string) error {
	if dst.NumMethod() != 0 {
		return misfit(v, dst, path)
	}
	g, err := d.generic(v, path)
	if err != nil {
		return err
	}
	if g != nil {
		dst.Set(reflect.ValueOf(g))
	}
	return nil
}

// slice sets a []byte dst from a PHP string, any other slice from a PHP
// list.
func (d fromPHP) slice(v any, dst reflect.Value, path string) error {
	if dst.Type().Elem().Kind() == reflect.Uint8 {
		s, ok := v.(string)
		if !ok {
			return misfit(v, dst, path)
		}
		dst.SetBytes([]byte(s))
		return nil
	}
	a, ok := v.(*phpserial.Array)
	if !ok {
		return misfit(v, dst, path)
	}
	s := reflect.MakeSlice(dst.Type(), len(a.Entries), len(a.Entries))
	for i, e := range a.Entries {
		if k, ok := e.Key.(int64); !ok || k != int64(i) {
			return fmt.Errorf("%w: %s: PHP array with key %v is not a list for Go %s", ErrUnmappable, path, e.Key, dst.Type())
		}
		if err := d.value(e.Value, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	dst.Set(s)
	return nil
}

// mapOf sets a map dst from a PHP array, converting its keys and values.
func (d fromPHP) mapOf(v any, dst reflect.Value, path string) error {
	a, ok := v.(*phpserial.Array)
	if !ok {
		return misfit(v, dst, path)
	}
	m := reflect.MakeMapWithSize(dst.Type(), len(a.Entries))
	for _, e := range a.Entries {
		k := reflect.New(dst.Type().Key()).Elem()
		if err := d.value(e.Key, k, path+" key"); err != nil {
			return err
		}
		ev := reflect.New(dst.Type().Elem()).Elem()
		if err := d.value(e.Value, ev, fmt.Sprintf("%s[%v]", path, e.Key)); err != nil {
			return err
		}
		m.SetMapIndex(k, ev)
	}
	dst.Set(m)
	return nil
}

// missingProperty is the error for a job's object that lacks the
// property f maps.
func missingProperty(o *phpserial.Object, t reflect.Type, f field) error {
	have := make([]string, len(o.Props))
	for i, p := range o.Props {
		have[i] = "$" + p.Name
	}
	name := t.FieldByIndex(f.index).Name
	return fmt.Errorf("%w: property $%s, which field %s.%s maps, is missing from the job's object (its properties: %s): was it renamed or removed in PHP while the job waited? Tag the field php:%q while queued jobs carry the old name, or php:%q if the class may leave it out (docs/changing-jobs.md)",
		ErrUnmappable, f.php, t, name, strings.Join(have, ", "), "oldName", f.php+",optional")
}

// structOf sets a struct dst from a PHP object, or from an associative
// array by the fields' names.
func (d fromPHP) structOf(v any, dst reflect.Value, path string) error {
	switch o := v.(type) {
	case *phpserial.Object:
		return d.object(o, dst, false)
	case *phpserial.Array:
		obj := &phpserial.Object{Class: "array"}
		for _, e := range o.Entries {
			k, ok := e.Key.(string)
			if !ok {
				return misfit(v, dst, path)
			}
			obj.Props = append(obj.Props, phpserial.Prop{Name: k, Value: e.Value})
		}
		return d.object(obj, dst, false)
	}
	return misfit(v, dst, path)
}

// generic converts to nil, bool, int64, float64, string, []any or
// map[string]any, for a field of type any.
func (d fromPHP) generic(v any, path string) (any, error) {
	if err := d.enter(path); err != nil {
		return nil, err
	}
	defer d.leave()
	v, err := d.resolve(v, path)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case *phpserial.Array:
		list := true
		for i, e := range v.Entries {
			if k, ok := e.Key.(int64); !ok || k != int64(i) {
				list = false
			}
		}
		if list {
			out := make([]any, len(v.Entries))
			for i, e := range v.Entries {
				if out[i], err = d.generic(e.Value, path); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		out := make(map[string]any, len(v.Entries))
		for _, e := range v.Entries {
			if out[fmt.Sprint(e.Key)], err = d.generic(e.Value, path); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *phpserial.Object:
		if why, ok := refused[v.Class]; ok {
			return nil, fmt.Errorf("%w: %s is %s", ErrUnmappable, path, why)
		}
		return nil, fmt.Errorf("%w: %s: a PHP object of class %s needs a Go struct field, not any", ErrUnmappable, path, v.Class)
	}
	return v, nil
}

func phpType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "string"
	case *phpserial.Array:
		return "array"
	case *phpserial.Object:
		return "object " + v.Class
	}
	return fmt.Sprintf("%T", v)
}

// toPHP converts a Go value to a serialize() tree: structs become
// associative arrays (a job's own struct becomes its object, see
// mapping.encode), slices lists, maps arrays with sorted keys.
func toPHP(v reflect.Value, path string) (any, error) { return toPHPAt(v, path, 0) }

func toPHPAt(v reflect.Value, path string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: %s: nested deeper than %d (a value that contains itself?)", ErrUnmappable, path, maxDepth)
	}
	switch v.Kind() {
	case reflect.Invalid:
		return nil, nil
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return toPHPAt(v.Elem(), path, depth+1)
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() > math.MaxInt64 {
			return nil, fmt.Errorf("%w: %s: %d is past PHP's largest int", ErrUnmappable, path, v.Uint())
		}
		return int64(v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return v.Float(), nil
	case reflect.String:
		return v.String(), nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return string(v.Bytes()), nil
		}
		return listToPHP(v, path, depth)
	case reflect.Map:
		return mapToPHP(v, path, depth)
	case reflect.Struct:
		return structToPHP(v, path, depth)
	}
	return nil, fmt.Errorf("%w: %s: Go %s has no PHP counterpart", ErrUnmappable, path, v.Type())
}

// listToPHP converts a slice or an array to a PHP list.
func listToPHP(v reflect.Value, path string, depth int) (any, error) {
	a := &phpserial.Array{Entries: make([]phpserial.Entry, v.Len())}
	for i := range v.Len() {
		e, err := toPHPAt(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		a.Entries[i] = phpserial.Entry{Key: int64(i), Value: e}
	}
	return a, nil
}

// mapToPHP converts a map with string or int keys to a PHP array, its
// keys sorted.
func mapToPHP(v reflect.Value, path string, depth int) (any, error) {
	a := &phpserial.Array{}
	for _, k := range v.MapKeys() {
		var key any
		switch k.Kind() {
		case reflect.String:
			key = k.String()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			key = k.Int()
		default:
			return nil, fmt.Errorf("%w: %s: map key of Go type %s: want a string or an int", ErrUnmappable, path, k.Type())
		}
		e, err := toPHPAt(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, key), depth+1)
		if err != nil {
			return nil, err
		}
		a.Entries = append(a.Entries, phpserial.Entry{Key: key, Value: e})
	}
	sort.Slice(a.Entries, func(i, j int) bool { return fmt.Sprint(a.Entries[i].Key) < fmt.Sprint(a.Entries[j].Key) })
	return a, nil
}

// structToPHP converts a struct to an associative array by its fields'
// PHP names.
func structToPHP(v reflect.Value, path string, depth int) (any, error) {
	fields, err := fieldsOf(v.Type())
	if err != nil {
		return nil, err
	}
	a := &phpserial.Array{Entries: []phpserial.Entry{}}
	for _, f := range fields {
		e, err := toPHPAt(v.FieldByIndex(f.index), path+"."+f.php, depth+1)
		if err != nil {
			return nil, err
		}
		a.Entries = append(a.Entries, phpserial.Entry{Key: f.php, Value: e})
	}
	return a, nil
}
