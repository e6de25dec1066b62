package phpserial

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// maxDepth bounds the nesting of arrays and objects Unmarshal accepts.
const maxDepth = 512

// maxPrealloc bounds the entries or properties allocated ahead for one
// array or object. Its count is checked against the bytes left, but each
// level of nesting may claim nearly all of them: allocating every claim
// ahead would cost the input's size times its depth (gigabytes for a
// megabyte of nested a:170000:{...). Past this, entries grow as read.
const maxPrealloc = 64

// SyntaxError is the error of input that is not PHP's serialize format,
// or uses a part of it this package refuses.
type SyntaxError struct {
	// Offset is the byte offset of the problem.
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("phpserial: at byte %d: %s", e.Offset, e.Msg)
}

// ErrUnsupported is matched (errors.Is) by the error of a value this
// package does not decode: a C: custom-serialized object or an E: enum.
var ErrUnsupported = errors.New("phpserial: unsupported PHP value")

type unsupportedError struct {
	offset int
	what   string
}

func (e *unsupportedError) Error() string {
	return fmt.Sprintf("phpserial: at byte %d: %s is not supported", e.offset, e.what)
}

func (e *unsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Unmarshal decodes one serialized value, which must fill data.
func Unmarshal(data []byte) (any, error) {
	d := decoder{data: data}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.pos != len(data) {
		return nil, d.errorf("%d bytes after the value", len(data)-d.pos)
	}
	return v, nil
}

type decoder struct {
	data []byte
	pos  int
	// slots counts the values decoded so far that r: and R: may name.
	slots int
}

func (d *decoder) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) expect(c byte) error {
	if d.pos >= len(d.data) {
		return d.errorf("want %q, got the end", c)
	}
	if d.data[d.pos] != c {
		return d.errorf("want %q, got %q", c, d.data[d.pos])
	}
	d.pos++
	return nil
}

// until returns the bytes up to the next c, and moves past c.
func (d *decoder) until(c byte) ([]byte, error) {
	start := d.pos
	for i := d.pos; i < len(d.data); i++ {
		if d.data[i] == c {
			d.pos = i + 1
			return d.data[start:i], nil
		}
	}
	return nil, d.errorf("want %q, got the end", c)
}

// integer reads a canonical decimal integer ended by end.
func (d *decoder) integer(end byte) (int64, error) {
	start := d.pos
	b, err := d.until(end)
	if err != nil {
		return 0, err
	}
	if !canonicalInt(b) {
		d.pos = start
		return 0, d.errorf("bad integer %q", b)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		d.pos = start
		return 0, d.errorf("integer %q: out of range", b)
	}
	return n, nil
}

// canonicalInt: what serialize writes, -?(0|[1-9][0-9]*), no "-0".
func canonicalInt(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
		if len(b) == 1 && b[0] == '0' {
			return false
		}
	}
	if len(b) == 0 || len(b) > 1 && b[0] == '0' {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// length reads a non-negative count or length ended by end, at most max.
func (d *decoder) length(end byte, max int) (int, error) {
	start := d.pos
	n, err := d.integer(end)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > int64(max) {
		d.pos = start
		return 0, d.errorf("length %d: want 0 to %d", n, max)
	}
	return int(n), nil
}

// str reads N:"bytes" (after the type letter and colon).
func (d *decoder) str() (string, error) {
	n, err := d.length(':', len(d.data)-d.pos)
	if err != nil {
		return "", err
	}
	if err := d.expect('"'); err != nil {
		return "", err
	}
	if len(d.data)-d.pos < n+1 {
		return "", d.errorf("string of %d bytes runs past the end", n)
	}
	s := string(d.data[d.pos : d.pos+n])
	d.pos += n
	if err := d.expect('"'); err != nil {
		return "", err
	}
	return s, nil
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.errorf("nested deeper than %d", maxDepth)
	}
	if len(d.data)-d.pos < 2 {
		return nil, d.errorf("want a value, got the end")
	}
	kind, start := d.data[d.pos], d.pos
	if kind == 'N' {
		d.pos++
		if err := d.expect(';'); err != nil {
			return nil, err
		}
		d.slots++
		return nil, nil
	}
	d.pos++
	if err := d.expect(':'); err != nil {
		return nil, err
	}
	var v any
	var err error
	switch kind {
	case 'b':
		v, err = d.boolean(start)
	case 'i':
		v, err = d.integer(';')
	case 'd':
		v, err = d.float(start)
	case 's':
		v, err = d.strValue()
	case 'a':
		d.slots++
		return d.array(depth)
	case 'O':
		d.slots++
		return d.object(depth)
	case 'r', 'R':
		return d.ref(kind, start)
	case 'C':
		return nil, &unsupportedError{offset: start, what: "a custom-serialized object (C:, PHP's Serializable)"}
	case 'E':
		return nil, &unsupportedError{offset: start, what: "an enum (E:)"}
	default:
		d.pos = start
		return nil, d.errorf("unknown type %q", kind)
	}
	if err != nil {
		return nil, err
	}
	d.slots++
	return v, nil
}

// boolean reads 0; or 1; of a b: value starting at start.
func (d *decoder) boolean(start int) (bool, error) {
	b, err := d.until(';')
	if err != nil {
		return false, err
	}
	if len(b) != 1 || b[0] != '0' && b[0] != '1' {
		d.pos = start
		return false, d.errorf("bad boolean %q", b)
	}
	return b[0] == '1', nil
}

// float reads the number of a d: value starting at start.
func (d *decoder) float(start int) (float64, error) {
	b, err := d.until(';')
	if err != nil {
		return 0, err
	}
	f, ok := parseFloat(string(b))
	if !ok {
		d.pos = start
		return 0, d.errorf("bad float %q", b)
	}
	return f, nil
}

// strValue reads N:"bytes"; of an s: value.
func (d *decoder) strValue() (string, error) {
	s, err := d.str()
	if err != nil {
		return "", err
	}
	if err := d.expect(';'); err != nil {
		return "", err
	}
	return s, nil
}

// ref reads the number of an r: or R: value starting at start, which
// must name a value before it; R: adds no value of its own.
func (d *decoder) ref(kind byte, start int) (any, error) {
	n, err := d.integer(';')
	if err != nil {
		return nil, err
	}
	if n < 1 || n > int64(d.slots) {
		d.pos = start
		return nil, d.errorf("%c:%d names no earlier value (%d so far)", kind, n, d.slots)
	}
	if kind == 'R' {
		return RefVar(n), nil
	}
	d.slots++
	return Ref(n), nil
}

func (d *decoder) array(depth int) (*Array, error) {
	// Each entry takes at least 6 bytes (i:0;N;).
	n, err := d.length(':', (len(d.data)-d.pos)/6)
	if err != nil {
		return nil, err
	}
	if err := d.expect('{'); err != nil {
		return nil, err
	}
	a := &Array{Entries: make([]Entry, 0, min(n, maxPrealloc))}
	for range n {
		key, err := d.key()
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a.Entries = append(a.Entries, Entry{Key: key, Value: v})
	}
	return a, d.expect('}')
}

// key reads an array key, i: or s:, which takes no slot.
func (d *decoder) key() (any, error) {
	if len(d.data)-d.pos < 2 {
		return nil, d.errorf("want an array key, got the end")
	}
	kind := d.data[d.pos]
	d.pos++
	if err := d.expect(':'); err != nil {
		return nil, err
	}
	switch kind {
	case 'i':
		return d.integer(';')
	case 's':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return s, d.expect(';')
	}
	d.pos -= 2
	return nil, d.errorf("array key of type %q: want i or s", kind)
}

func (d *decoder) object(depth int) (*Object, error) {
	class, err := d.str()
	if err != nil {
		return nil, err
	}
	if class == "" {
		return nil, d.errorf("object with an empty class name")
	}
	if err := d.expect(':'); err != nil {
		return nil, err
	}
	// Each property takes at least 8 bytes (s:0:"";N;).
	n, err := d.length(':', (len(d.data)-d.pos)/8)
	if err != nil {
		return nil, err
	}
	if err := d.expect('{'); err != nil {
		return nil, err
	}
	o := &Object{Class: class, Props: make([]Prop, 0, min(n, maxPrealloc))}
	for range n {
		if len(d.data)-d.pos < 2 || d.data[d.pos] != 's' {
			return nil, d.errorf("property name of %s: want a string", class)
		}
		d.pos++
		if err := d.expect(':'); err != nil {
			return nil, err
		}
		start := d.pos
		raw, err := d.str()
		if err != nil {
			return nil, err
		}
		if err := d.expect(';'); err != nil {
			return nil, err
		}
		p, err := unmangle(raw)
		if err != nil {
			return nil, &SyntaxError{Offset: start, Msg: err.Error()}
		}
		if p.Value, err = d.value(depth + 1); err != nil {
			return nil, err
		}
		o.Props = append(o.Props, p)
	}
	return o, d.expect('}')
}

func parseFloat(s string) (float64, bool) {
	switch s {
	case "INF":
		return math.Inf(1), true
	case "-INF":
		return math.Inf(-1), true
	case "NAN":
		return math.NaN(), true
	case "":
		return 0, false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'E' || c == 'e') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}
