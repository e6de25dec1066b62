package load

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"

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
	// exts is what is registered with msgpack.
	exts *extRegistry
}

// extRegistry is what a package, and the packages whose interfaces its
// jobs carry, register with msgpack (extRegistrars).
type extRegistry struct {
	// types are the types the package registers, which an interface
	// field may hold.
	types []types.Type
	// dir is the package's directory, where import paths resolve.
	dir string
	// others records whether another package, by import path, registers
	// any type.
	others map[string]bool
}

// walk returns a new walk over the types of l's package.
func (l *loader) walk() *typeWalk {
	if l.exts == nil {
		l.exts = &extRegistry{types: registeredExts(l.pkg.Syntax, l.pkg.TypesInfo), others: map[string]bool{}}
		if len(l.pkg.GoFiles) > 0 {
			l.exts.dir = filepath.Dir(l.pkg.GoFiles[0])
		}
	}
	return &typeWalk{seen: map[types.Type]bool{}, pkg: l.pkg.Name, exts: l.exts}
}

// registers reports whether the package at path registers any type with
// msgpack, reading its source (not its tests); a package of the standard
// library never does. An interface of a package that registers types is
// taken to be one of the interfaces they fill.
func (r *extRegistry) registers(path string) bool {
	if known, ok := r.others[path]; ok {
		return known
	}
	found := false
	ctxt := build.Default
	ctxt.Dir = r.dir // in module mode, where the main module is found
	bp, err := ctxt.Import(path, r.dir, 0)
	if err == nil && !bp.Goroot {
		fset := token.NewFileSet()
		for _, name := range bp.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(bp.Dir, name), nil, parser.SkipObjectResolution)
			if err == nil && callsRegistrar(f) {
				found = true
				break
			}
		}
	}
	r.others[path] = found
	return found
}

// callsRegistrar reports whether f calls one of msgpack's extRegistrars,
// by the name f imports msgpack under.
func callsRegistrar(f *ast.File) bool {
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == msgpackPath {
			local = "msgpack"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" || local == "_" {
		return false
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local && slices.Contains(extRegistrars, sel.Sel.Name) {
				found = true
			}
		}
		return !found
	})
	return found
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
// implements it, or the interface's own package registers types
// (extRegistry).
func (w *typeWalk) lostInterface(t types.Type, u *types.Interface, path string) *unencodable {
	if u.Empty() || isError(t) {
		return nil
	}
	for _, e := range w.exts.types {
		if types.Implements(e, u) || types.Implements(types.NewPointer(e), u) {
			return nil
		}
	}
	if named, ok := t.(*types.Named); ok && named.Obj().Pkg() != nil && w.exts.registers(named.Obj().Pkg().Path()) {
		return nil
	}
	return &unencodable{path: path, typ: t, inner: t,
		lost: fmt.Sprintf("%%s is an interface, and msgpack decodes into one only the types registered with msgpack.RegisterExt, of which neither package %s nor the interface's own registers any that implements it", w.pkg),
		fix:  fmt.Sprintf("carry a concrete type, or register the types it holds with msgpack.RegisterExt in package %s or the interface's", w.pkg)}
}
