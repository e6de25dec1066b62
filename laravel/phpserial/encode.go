package phpserial

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Marshal encodes v, a tree of the types Unmarshal returns, as PHP's
// serialize() does. int is accepted as int64. A Ref or RefVar must name
// a value written before it; a float is written as PHP writes it
// (serialize_precision -1: the shortest form that reads back the same).
func Marshal(v any) ([]byte, error) {
	e := encoder{}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct {
	buf   []byte
	slots int
}

func (e *encoder) str(s string) {
	e.buf = append(e.buf, 's', ':')
	e.buf = strconv.AppendInt(e.buf, int64(len(s)), 10)
	e.buf = append(e.buf, ':', '"')
	e.buf = append(e.buf, s...)
	e.buf = append(e.buf, '"', ';')
}

func (e *encoder) value(v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("phpserial: nested deeper than %d", maxDepth)
	}
	switch v := v.(type) {
	case *Array:
		return e.array(v, depth)
	case *Object:
		return e.object(v, depth)
	case Ref:
		if err := e.ref('r', int(v)); err != nil {
			return err
		}
	case RefVar:
		return e.ref('R', int(v)) // R: takes no slot
	default:
		if err := e.scalar(v); err != nil {
			return err
		}
	}
	e.slots++
	return nil
}

// scalar writes null, a bool, an int, a float or a string.
func (e *encoder) scalar(v any) error {
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, 'N', ';')
	case bool:
		if v {
			e.buf = append(e.buf, "b:1;"...)
		} else {
			e.buf = append(e.buf, "b:0;"...)
		}
	case int:
		e.int('i', int64(v))
	case int64:
		e.int('i', v)
	case float64:
		e.buf = append(e.buf, 'd', ':')
		e.buf = append(e.buf, FormatFloat(v)...)
		e.buf = append(e.buf, ';')
	case string:
		e.str(v)
	default:
		return fmt.Errorf("phpserial: cannot serialize Go type %T", v)
	}
	return nil
}

// int writes kind:n; (an int, or a reference when kind is r or R).
func (e *encoder) int(kind byte, n int64) {
	e.buf = append(e.buf, kind, ':')
	e.buf = strconv.AppendInt(e.buf, n, 10)
	e.buf = append(e.buf, ';')
}

// ref writes r:n or R:n, which must name a value written before it; the
// caller counts the slot of an r:.
func (e *encoder) ref(kind byte, n int) error {
	if n < 1 || n > e.slots {
		return fmt.Errorf("phpserial: %c:%d names no earlier value (%d so far)", kind, n, e.slots)
	}
	e.int(kind, int64(n))
	return nil
}

// array writes a:N:{key;value...}, taking its slot before its entries.
func (e *encoder) array(a *Array, depth int) error {
	if a == nil {
		return fmt.Errorf("phpserial: nil *Array")
	}
	e.slots++
	e.buf = append(e.buf, 'a', ':')
	e.buf = strconv.AppendInt(e.buf, int64(len(a.Entries)), 10)
	e.buf = append(e.buf, ':', '{')
	for _, en := range a.Entries {
		if err := e.key(en.Key); err != nil {
			return err
		}
		if err := e.value(en.Value, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// key writes an array key, an int or a string.
func (e *encoder) key(k any) error {
	switch k := k.(type) {
	case int64:
		e.int('i', k)
	case int:
		e.int('i', int64(k))
	case string:
		e.str(k)
	default:
		return fmt.Errorf("phpserial: array key of Go type %T: want int64 or string", k)
	}
	return nil
}

// object writes O:len:"Class":N:{name;value...}, taking its slot
// before its properties.
func (e *encoder) object(o *Object, depth int) error {
	if o == nil {
		return fmt.Errorf("phpserial: nil *Object")
	}
	if o.Class == "" {
		return fmt.Errorf("phpserial: object with an empty class name")
	}
	e.slots++
	e.buf = append(e.buf, 'O', ':')
	e.buf = strconv.AppendInt(e.buf, int64(len(o.Class)), 10)
	e.buf = append(e.buf, ':', '"')
	e.buf = append(e.buf, o.Class...)
	e.buf = append(e.buf, '"', ':')
	e.buf = strconv.AppendInt(e.buf, int64(len(o.Props)), 10)
	e.buf = append(e.buf, ':', '{')
	for _, p := range o.Props {
		if err := p.check(); err != nil {
			return fmt.Errorf("phpserial: property of %s: %w", o.Class, err)
		}
		e.str(p.mangled())
		if err := e.value(p.Value, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// check refuses a property that would not read back as itself.
func (p Prop) check() error {
	switch {
	case p.Visibility == Private && (p.Declarer == "" || p.Declarer == "*" || strings.IndexByte(p.Declarer, 0) >= 0):
		return fmt.Errorf("private property %q: bad declaring class %q", p.Name, p.Declarer)
	case p.Visibility != Private && p.Declarer != "":
		return fmt.Errorf("%v property %q has a declaring class", p.Visibility, p.Name)
	case p.Visibility == Public && strings.HasPrefix(p.Name, "\x00"):
		return fmt.Errorf("public property name %q starts with a NUL byte", p.Name)
	}
	return nil
}

// FormatFloat formats f as PHP's serialize() does with
// serialize_precision -1: the shortest digits that read back as f,
// in plain notation for decimal exponents from -4 to 17, else as
// 1.5E+25; INF, -INF and NAN by name.
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	decpt := e + 1
	if decpt < -3 || decpt > 17 {
		frac := digits[1:]
		if frac == "" {
			frac = "0"
		}
		es := strconv.Itoa(e)
		if e >= 0 {
			es = "+" + es
		}
		return sign + digits[:1] + "." + frac + "E" + es
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits))
	}
	return sign + digits[:decpt] + "." + digits[decpt:]
}

// Resolve returns value n of root, numbered as r:n and R:n number them:
// from 1, in the order serialize writes them, every value counting but
// an R. ok is false if root has no value n.
func Resolve(root any, n int) (v any, ok bool) {
	count := 0
	var walk func(v any) bool
	walk = func(x any) bool {
		if _, isVar := x.(RefVar); isVar {
			return false
		}
		count++
		if count == n {
			v, ok = x, true
			return true
		}
		switch x := x.(type) {
		case *Array:
			for _, e := range x.Entries {
				if walk(e.Value) {
					return true
				}
			}
		case *Object:
			for _, p := range x.Props {
				if walk(p.Value) {
					return true
				}
			}
		}
		return false
	}
	walk(root)
	return v, ok
}
