package load

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"

	"golang.org/x/tools/go/types/typeutil"
)

// carryData is the way forward for a field that cannot cross a queue.
const carryData = "carry data such as an ID instead, and have the handler look the thing up (a connection or client belongs in the handler's own struct)"

// msgpackPath is the import path of the msgpack the runtime encodes jobs
// with; its registry of extension types decides what an interface field
// can hold.
const msgpackPath = "github.com/vmihailenco/msgpack/v5"

// extRegistrars are the functions of msgpack that register a type the
// decoder can put into an interface.
var extRegistrars = []string{"RegisterExt", "RegisterExtDecoder"}

// typeWalk is the state of one checkEncodable walk.
type typeWalk struct {
	// seen holds the named types being walked, to stop at recursion.
	seen map[types.Type]bool
	// pkg is the name of the package whose jobs are checked.
	pkg string
	// exts are the types the package registers with msgpack
	// (extRegistrars), which an interface field may hold.
	exts []types.Type
}

// walk returns a new walk over the types of l's package.
func (l *loader) walk() *typeWalk {
	if l.exts == nil {
		exts := registeredExts(l.pkg.Syntax, l.pkg.TypesInfo)
		l.exts = &exts
	}
	return &typeWalk{seen: map[types.Type]bool{}, pkg: l.pkg.Name, exts: *l.exts}
}

// registeredExts returns the types registered in files with msgpack's
// extRegistrars: the type of the value each call passes.
func registeredExts(files []*ast.File, info *types.Info) []types.Type {
	var out []types.Type
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			fn, ok := typeutil.Callee(info, call).(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg().Path() != msgpackPath || !slices.Contains(extRegistrars, fn.Name()) {
				return true
			}
			if t := info.TypeOf(call.Args[1]); t != nil && !types.IsInterface(t) {
				out = append(out, t)
			}
			return true
		})
	}
	return out
}

// lostStruct reports a struct type t (u its underlying struct) that has
// fields but none that msgpack carries, such as sql.DB or sync.Mutex:
// msgpack encodes it as an empty map, so the handler gets a zero value
// in its place. Blank fields (_) carry nothing anyway.
func lostStruct(t types.Type, u *types.Struct, path string) *unencodable {
	lost := false
	for i := range u.NumFields() {
		if carried(u, i) {
			return nil
		}
		lost = lost || u.Field(i).Name() != "_"
	}
	if !lost {
		return nil
	}
	return &unencodable{path: path, typ: t, inner: t,
		lost: "%s has no exported field, so msgpack carries nothing of it and the handler gets an empty one"}
}

// lostInterface reports an interface type t (u its underlying
// interface) that msgpack cannot fill on decoding: any other than the
// empty interface, which takes maps, slices and plain values, and error,
// which takes the message, unless the package registers a type that
// implements it (typeWalk.exts).
func (w *typeWalk) lostInterface(t types.Type, u *types.Interface, path string) *unencodable {
	if u.Empty() || isError(t) {
		return nil
	}
	for _, e := range w.exts {
		if types.Implements(e, u) || types.Implements(types.NewPointer(e), u) {
			return nil
		}
	}
	return &unencodable{path: path, typ: t, inner: t,
		lost: fmt.Sprintf("%%s is an interface, and msgpack decodes into one only the types registered with msgpack.RegisterExt, of which package %s registers none that implements it", w.pkg),
		fix:  fmt.Sprintf("carry a concrete type, or register the types it holds with msgpack.RegisterExt in package %s", w.pkg)}
}
