package phpserial

import "fmt"

// Array is a PHP array: ordered entries whose keys are int64 or string.
type Array struct {
	Entries []Entry
}

// Entry is one key and value of an Array.
type Entry struct {
	// Key is an int64 or a string.
	Key   any
	Value any
}

// Get returns the value under key (an int64 or a string).
func (a *Array) Get(key any) (any, bool) {
	for _, e := range a.Entries {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// Visibility is the visibility of an object's property.
type Visibility int

const (
	// Public properties are serialized under their bare name.
	Public Visibility = iota
	// Protected properties are serialized as "\x00*\x00name".
	Protected
	// Private properties are serialized as "\x00Class\x00name", Class
	// being the class that declares them.
	Private
)

func (v Visibility) String() string {
	switch v {
	case Protected:
		return "protected"
	case Private:
		return "private"
	}
	return "public"
}

// Object is a PHP object: its class and its properties in order.
type Object struct {
	Class string
	Props []Prop
}

// Prop is one property of an Object.
type Prop struct {
	Name       string
	Visibility Visibility
	// Declarer is the class that declares a private property; empty for
	// the others.
	Declarer string
	Value    any
}

// Get returns the value of the property called name, of any
// visibility; for a name declared privately by several classes of a
// hierarchy, the first.
func (o *Object) Get(name string) (any, bool) {
	for _, p := range o.Props {
		if p.Name == name {
			return p.Value, true
		}
	}
	return nil, false
}

// mangled returns the property's name as serialize() writes it.
func (p Prop) mangled() string {
	switch p.Visibility {
	case Protected:
		return "\x00*\x00" + p.Name
	case Private:
		return "\x00" + p.Declarer + "\x00" + p.Name
	}
	return p.Name
}

// unmangle splits a serialized property name.
func unmangle(s string) (Prop, error) {
	if len(s) == 0 || s[0] != 0 {
		return Prop{Name: s}, nil
	}
	for i := 1; i < len(s); i++ {
		if s[i] == 0 {
			class, name := s[1:i], s[i+1:]
			switch {
			case class == "":
				return Prop{}, fmt.Errorf("property name %q: empty class", s)
			case class == "*":
				return Prop{Name: name, Visibility: Protected}, nil
			}
			return Prop{Name: name, Visibility: Private, Declarer: class}, nil
		}
	}
	return Prop{}, fmt.Errorf("property name %q: unterminated mangled name", s)
}

// Ref is r:N, a second use of value N (an object) without a PHP
// reference.
type Ref int

// RefVar is R:N, a PHP reference to value N (&$x).
type RefVar int
