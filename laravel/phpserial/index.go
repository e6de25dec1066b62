package phpserial

// Index numbers the values of a decoded tree once, as r:n and R:n number
// them, so that a caller resolving many references does not walk the
// tree for each (Resolve does).
type Index struct {
	values []any
	// sizes[i] is how many values values[i] holds, itself and every
	// value inside it, R:s included.
	sizes []int
}

// NewIndex numbers the values of root.
func NewIndex(root any) *Index {
	x := &Index{}
	x.add(root)
	return x
}

// add numbers v and what it holds, and returns how many values that is.
func (x *Index) add(v any) int {
	if _, isVar := v.(RefVar); isVar {
		return 1 // an R: takes no number
	}
	n := len(x.values)
	x.values = append(x.values, v)
	x.sizes = append(x.sizes, 0)
	size := 1
	switch v := v.(type) {
	case *Array:
		for _, e := range v.Entries {
			size += x.add(e.Value)
		}
	case *Object:
		for _, p := range v.Props {
			size += x.add(p.Value)
		}
	}
	x.sizes[n] = size
	return size
}

// Len returns how many values are numbered.
func (x *Index) Len() int { return len(x.values) }

// Value returns value n (from 1), and how many values it holds, itself
// included: what a reader that follows a reference to it goes through.
// ok is false if there is no value n.
func (x *Index) Value(n int) (v any, size int, ok bool) {
	if n < 1 || n > len(x.values) {
		return nil, 0, false
	}
	return x.values[n-1], x.sizes[n-1], true
}
