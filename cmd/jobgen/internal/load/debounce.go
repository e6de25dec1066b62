package load

import (
	"go/token"
	"go/types"
	"strings"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// debounceKeyMethod is the method a debounced job's key comes from: the
// one debounce_key generates, or the type's own (runtime.DebouncedJob).
const debounceKeyMethod = "DebounceKey"

// checkDebounce checks the debounce keys of job, of type named with
// fields st: debounce needs a key (debounce_key=Field, or a DebounceKey
// method of the type's own), the key and max wait need debounce, the
// field must exist and format as a key, and a debounced job is neither
// unique nor delayed (runtime refuses both at dispatch). A key seen
// whose value was bad has been reported, and is not reported again.
func (l *loader) checkDebounce(pos token.Position, named *types.Named, st *types.Struct, job model.Job, seen map[string]bool) {
	name, o := job.TypeName, job.Options
	own := types.NewMethodSet(named).Lookup(nil, debounceKeyMethod) != nil
	if seen["debounce"] && o.Debounce == 0 || seen["debounce_key"] && job.DebounceKey == "" {
		return
	}
	if o.Debounce == 0 {
		if job.DebounceKey != "" || o.DebounceMaxWait != 0 {
			l.errs.add(pos, "%s sets debounce_key or debounce_max_wait without debounce: add debounce=30s (its window), or drop them", name)
		}
		return
	}
	switch {
	case job.DebounceKey == "" && !own:
		l.errs.add(pos, "%s sets debounce without a key: add debounce_key=Field, the field whose value keys a burst of dispatches (such as debounce_key=UserID), or give it a method DebounceKey() string", name)
	case job.DebounceKey != "" && own:
		l.errs.add(pos, "%s has a DebounceKey method of its own and debounce_key=%s, which generates one: drop one of them", name, job.DebounceKey)
	case o.DebounceMaxWait != 0 && o.DebounceMaxWait < o.Debounce:
		l.errs.add(pos, "%s: debounce_max_wait (%v) must be at least debounce (%v)", name, o.DebounceMaxWait, o.Debounce)
	case o.UniqueFor != 0:
		l.errs.add(pos, "%s sets both debounce and unique_for: a unique job keeps the first dispatch, a debounced one the last; use one of them", name)
	case o.Delay != 0:
		l.errs.add(pos, "%s sets both debounce and delay: the debounce window is its delay; drop delay", name)
	}
	if job.DebounceKey != "" {
		l.checkDebounceField(pos, name, st, job.DebounceKey)
	}
}

// checkDebounceField checks that field of the struct st is one whose
// value makes a debounce key: a string, a number, a bool, or a
// fmt.Stringer.
func (l *loader) checkDebounceField(pos token.Position, name string, st *types.Struct, field string) {
	var names []string
	for i := range st.NumFields() {
		f := st.Field(i)
		names = append(names, f.Name())
		if f.Name() != field {
			continue
		}
		if !keyable(f.Type()) {
			l.errs.add(pos, "debounce_key=%s: field %s.%s is a %s; a debounce key is a string, a number, a bool or a fmt.Stringer", field, name, field, types.TypeString(f.Type(), l.qualifier()))
		}
		return
	}
	l.errs.add(pos, "debounce_key=%s: %s has no field %s; its fields: %s", field, name, field, strings.Join(names, ", "))
}

// keyable reports whether a value of type t formats as a debounce key.
func keyable(t types.Type) bool {
	if b, ok := t.Underlying().(*types.Basic); ok {
		return b.Info()&(types.IsString|types.IsInteger|types.IsBoolean) != 0
	}
	sel := types.NewMethodSet(t).Lookup(nil, "String")
	if sel == nil {
		return false
	}
	sig, ok := sel.Obj().Type().(*types.Signature)
	return ok && sig.Params().Len() == 0 && sig.Results().Len() == 1 && types.Identical(sig.Results().At(0).Type(), types.Typ[types.String])
}
