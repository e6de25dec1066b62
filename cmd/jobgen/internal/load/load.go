// Package load reads Go packages with golang.org/x/tools/go/packages and
// turns their `//job:` annotated structs into model values, checking
// everything the generated code relies on. Problems come back as a List
// of errors with positions, all at once.
package load

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// Config says which packages to load.
type Config struct {
	// Dir is the directory patterns are resolved in; "" means the
	// current directory.
	Dir string
	// Patterns are package patterns as for go build ("." or "./..." or
	// import paths); none means ".".
	Patterns []string
	// Env is the go command's environment; nil means os.Environ().
	Env []string
}

// Load loads the packages cfg names and returns them with their jobs,
// including packages with no jobs (so that a stale generated file can be
// removed). Problems in the source are returned as a List.
//
// Earlier output of jobgen (model.OutputFile starting with model.Header)
// is left out of the loaded package, so that it is regenerated from the
// annotations alone, even when it is stale and no longer compiles. Code
// in the package that uses the generated methods then has type errors
// while loading; type errors are tolerated for that reason, and the
// compiler reports any that remain after generation.
func Load(cfg Config) ([]*model.Package, error) {
	patterns := cfg.Patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	overlay, err := hideOutput(cfg, patterns)
	if err != nil {
		return nil, err
	}
	pkgs, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:     cfg.Dir,
		Env:     cfg.Env,
		Overlay: overlay,
	}, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(patterns, " "), err)
	}
	var (
		out  []*model.Package
		errs List
	)
	for _, pkg := range pkgs {
		if fatal := packageErrors(pkg); len(fatal) > 0 {
			errs = append(errs, fatal...)
			continue
		}
		p, perrs := loadPackage(pkg)
		errs = append(errs, perrs...)
		out = append(out, p)
	}
	if len(errs) > 0 {
		errs.sort()
		return nil, errs
	}
	slices.SortFunc(out, func(a, b *model.Package) int { return cmp.Compare(a.Path, b.Path) })
	return out, nil
}

// hideOutput lists the packages and returns an overlay that replaces
// each earlier jobgen output file with a bare package clause.
func hideOutput(cfg Config, patterns []string) (map[string][]byte, error) {
	pkgs, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedFiles,
		Dir:  cfg.Dir,
		Env:  cfg.Env,
	}, patterns...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", strings.Join(patterns, " "), err)
	}
	overlay := map[string][]byte{}
	for _, pkg := range pkgs {
		for _, f := range pkg.GoFiles {
			if filepath.Base(f) != model.OutputFile {
				continue
			}
			generated, err := IsOutput(f)
			if err != nil {
				return nil, err
			}
			if generated {
				overlay[f] = []byte("package " + pkg.Name + "\n")
			}
		}
	}
	return overlay, nil
}

// IsOutput reports whether the file at path is jobgen's output: its first
// line is "// " + model.Header. A missing file is not.
func IsOutput(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	return string(bytes.TrimSpace(first)) == "// "+model.Header, nil
}

// packageErrors returns the problems that stop pkg from being read:
// errors listing it and syntax errors. Type errors are not among them
// (see Load).
func packageErrors(pkg *packages.Package) List {
	var errs List
	for _, e := range pkg.Errors {
		// go list compiles the package for export data; a failure there is
		// the compiler's report of the type errors, which are tolerated.
		if e.Kind == packages.TypeError || strings.HasPrefix(e.Msg, "# "+pkg.PkgPath+"\n") {
			continue
		}
		errs = append(errs, &Error{Pos: parsePos(e.Pos), Msg: e.Msg})
	}
	return errs
}

// parsePos parses the "file:line:col" of a packages.Error.
func parsePos(s string) token.Position {
	var p token.Position
	if s == "" || s == "-" {
		return p
	}
	parts := strings.Split(s, ":")
	nums := []*int{&p.Column, &p.Line}
	for len(parts) > 1 && len(nums) > 0 {
		var n int
		if _, err := fmt.Sscanf(parts[len(parts)-1], "%d", &n); err != nil {
			break
		}
		*nums[0] = n
		nums = nums[1:]
		parts = parts[:len(parts)-1]
	}
	if len(nums) == 1 { // only a line
		p.Line, p.Column = p.Column, 0
	}
	p.Filename = strings.Join(parts, ":")
	return p
}

// loader reads one package.
type loader struct {
	pkg  *packages.Package
	errs List
	// pending are the annotation lines not yet seen in a type's doc
	// comment.
	pending map[*ast.Comment]bool
	// exts is what the package and those it takes interfaces from
	// register with msgpack; nil until walk reads it
	// (lost_in_transit.go).
	exts *extRegistry
}

func loadPackage(pkg *packages.Package) (*model.Package, List) {
	l := &loader{pkg: pkg, pending: map[*ast.Comment]bool{}}
	p := &model.Package{Name: pkg.Name, Path: pkg.PkgPath}
	if len(pkg.GoFiles) > 0 {
		p.Dir = filepath.Dir(pkg.GoFiles[0])
	}
	var f foundTypes
	f.events = map[string]*model.Event{}
	f.annotated = map[string]bool{}
	for _, file := range pkg.Syntax {
		l.collect(file, &f)
	}
	for c := range l.pending {
		l.errs.add(l.position(c.Slash), "//job: annotation is not in the doc comment of a package-level type (is there a blank line between it and the type?)")
	}
	dup := l.duplicateNames(f)
	var kept []foundJob
	for _, j := range f.jobs {
		if !dup[j.job.TypeName] {
			kept = append(kept, j)
		}
	}
	l.linkNeeds(kept, f.annotated) // needs.go
	for _, j := range kept {
		p.Jobs = append(p.Jobs, j.job)
	}
	slices.SortFunc(p.Jobs, func(a, b model.Job) int { return cmp.Compare(a.TypeName, b.TypeName) })
	l.linkListeners(p, f.events, f.listeners, dup)
	if !p.Empty() {
		l.checkPackageNames(p.HasLaravel())
	}
	p.Wire = l.wireTypes(p) // schema.go
	l.errs.sort()
	return p, l.errs
}

// foundJob is a job with the position of its type name, and of its
// `needs=` key if it has one.
type foundJob struct {
	job      model.Job
	pos      token.Position
	needsPos token.Position
}

// foundTypes is what the annotated types of a package declare.
type foundTypes struct {
	jobs      []foundJob
	annotated map[string]bool // every type annotated as a job, sound or not
	events    map[string]*model.Event
	listeners []foundListener
}

// collect reads the annotated types of file into f, and marks every
// annotation line in it pending until a type's doc takes it.
func (l *loader) collect(file *ast.File, f *foundTypes) {
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			if _, kind := classify(c.Text); kind != notAnnotation {
				l.pending[c] = true
			} else if fix, ok := nearMiss(c.Text); ok {
				l.errs.add(l.position(c.Slash), "%q is not a //job: annotation, so jobgen would ignore it; write it as %s (\"job\" in lower case, then a colon, with no space after // or after the colon)", c.Text, fix)
			}
		}
	}
	for _, decl := range file.Decls {
		for _, spec := range l.annotatedTypes(decl) {
			a, ok := l.parse(spec.doc)
			pos := l.position(spec.spec.Name.Pos())
			switch {
			case a.event:
				if l.event(spec.spec, a) && ok {
					f.events[spec.spec.Name.Name] = &model.Event{TypeName: spec.spec.Name.Name}
				}
			case a.listen != "" || a.sync:
				if li, lok := l.listener(spec.spec, a); lok && ok {
					f.listeners = append(f.listeners, foundListener{li, pos})
				}
			default:
				f.annotated[spec.spec.Name.Name] = true
				if job, jok := l.job(spec.spec, a); jok && ok {
					f.jobs = append(f.jobs, foundJob{job, pos, l.keyPos(spec.doc, "needs")})
				}
			}
		}
	}
}

// duplicateNames reports the jobs and listeners whose name an earlier
// one in source order has (both are routed by name on one router), at
// the later one, and returns their type names.
func (l *loader) duplicateNames(f foundTypes) map[string]bool {
	named := make([]foundJob, 0, len(f.jobs)+len(f.listeners))
	named = append(named, f.jobs...)
	for _, li := range f.listeners {
		named = append(named, foundJob{job: model.Job{TypeName: li.l.TypeName, Name: li.l.Name}, pos: li.pos})
	}
	slices.SortFunc(named, func(a, b foundJob) int {
		return cmp.Or(cmp.Compare(a.pos.Filename, b.pos.Filename), cmp.Compare(a.pos.Offset, b.pos.Offset))
	})
	byName := map[string]foundJob{}
	dup := map[string]bool{}
	for _, n := range named {
		if prev, ok := byName[n.job.Name]; ok {
			l.errs.add(n.pos, "job name %q of %s is also the name of %s (%s); set a distinct name= on one of them", n.job.Name, n.job.TypeName, prev.job.TypeName, shortPos(prev.pos))
			dup[n.job.TypeName] = true
			continue
		}
		byName[n.job.Name] = n
	}
	return dup
}

func (l *loader) position(pos token.Pos) token.Position { return l.pkg.Fset.Position(pos) }

func shortPos(p token.Position) string {
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}

// annotatedSpec is a type spec with the annotation lines of its doc.
type annotatedSpec struct {
	spec *ast.TypeSpec
	doc  []*ast.Comment
}

// annotatedTypes returns the annotated type specs of decl, and reports
// annotations on anything else.
func (l *loader) annotatedTypes(decl ast.Decl) []annotatedSpec {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		for _, c := range l.take(d.Doc) {
			l.errs.add(l.position(c.Slash), "//job: annotates func %s; it belongs on a struct type", d.Name.Name)
		}
	case *ast.GenDecl:
		if d.Tok != token.TYPE {
			for _, c := range l.take(d.Doc) {
				l.errs.add(l.position(c.Slash), "//job: annotates a %s declaration; it belongs on a struct type", d.Tok)
			}
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for _, c := range l.take(vs.Doc) {
						l.errs.add(l.position(c.Slash), "//job: annotates a %s declaration; it belongs on a struct type", d.Tok)
					}
				}
			}
			return nil
		}
		var out []annotatedSpec
		if !d.Lparen.IsValid() { // type T struct{...}: the doc is the decl's
			ts := d.Specs[0].(*ast.TypeSpec)
			if doc := l.take(d.Doc); len(doc) > 0 {
				out = append(out, annotatedSpec{ts, doc})
			}
			return out
		}
		for _, c := range l.take(d.Doc) {
			l.errs.add(l.position(c.Slash), "//job: annotates a group of types; put it in the doc comment of each job type inside the group")
		}
		for _, s := range d.Specs {
			ts := s.(*ast.TypeSpec)
			if doc := l.take(ts.Doc); len(doc) > 0 {
				out = append(out, annotatedSpec{ts, doc})
			}
		}
		return out
	}
	return nil
}

// take returns the annotation lines of doc and marks them seen.
func (l *loader) take(doc *ast.CommentGroup) []*ast.Comment {
	if doc == nil {
		return nil
	}
	var lines []*ast.Comment
	for _, c := range doc.List {
		if _, kind := classify(c.Text); kind != notAnnotation {
			lines = append(lines, c)
			delete(l.pending, c)
		}
	}
	return lines
}

// parse reads the annotation lines of one type; ok is false if they
// have problems, which are recorded.
func (l *loader) parse(doc []*ast.Comment) (a annotation, ok bool) {
	before := len(l.errs)
	for _, c := range doc {
		text, kind := classify(c.Text)
		if kind == spacedLine {
			l.errs.add(l.position(c.Slash), "write the annotation as //job:%s, with no space after // or after the colon: gofmt turns %q into a plain comment", strings.Join(strings.Fields(text), " "), c.Text)
			continue
		}
		for _, e := range a.parseLine(text) {
			l.errs.add(l.position(c.Slash+token.Pos(len(prefix)+e.offset)), "%s", e.msg)
		}
	}
	return a, len(l.errs) == before
}

// job reads one annotated job type; ok is false if it has problems,
// which are recorded.
func (l *loader) job(spec *ast.TypeSpec, a annotation) (model.Job, bool) {
	before := len(l.errs)
	job := model.Job{TypeName: spec.Name.Name, Name: a.name, Options: a.opts, Laravel: strings.TrimPrefix(a.laravel, `\`), Result: a.result, DebounceKey: a.debounceKey, GroupField: a.group, Wire: a.wire}
	if job.Name == "" {
		job.Name = l.pkg.Name + "." + job.TypeName
	}
	l.checkType(spec, &job, a.seen)
	l.checkGroup(spec, &job)
	l.checkLaravel(spec, job)
	l.checkUpgrade(spec, job) // schema.go
	return job, len(l.errs) == before
}

// checkType checks that spec declares a struct type the generated code
// can serve, and finds its Handle and Failed methods; seen holds the
// keys its annotation set, well or not.
func (l *loader) checkType(spec *ast.TypeSpec, job *model.Job, seen map[string]bool) {
	named, st, ok := l.structType(spec, "job")
	if !ok {
		return
	}
	methods := model.Methods
	if job.Result != "" {
		methods = append(slices.Clone(methods), model.ResultMethods...)
		l.checkResult(spec, job)
	}
	if len(job.Options.Needs) > 0 {
		methods = append(slices.Clone(methods), model.StepMethods...)
	}
	l.checkFields(l.position(spec.Name.Pos()), spec.Name.Name, st, methods, "job")
	l.checkMethods(named, job, methods)
	l.checkDebounce(l.position(spec.Name.Pos()), named, st, *job, seen)
}

// checkResult checks that the result type of job names a type of the
// package that msgpack can encode.
func (l *loader) checkResult(spec *ast.TypeSpec, job *model.Job) {
	pos := l.position(spec.Name.Pos())
	obj, ok := l.pkg.Types.Scope().Lookup(job.Result).(*types.TypeName)
	if !ok {
		l.errs.add(pos, "%s has result=%s, but package %s declares no type %s", job.TypeName, job.Result, l.pkg.Name, job.Result)
		return
	}
	if named, ok := obj.Type().(*types.Named); ok && named.TypeParams().Len() > 0 {
		l.errs.add(pos, "%s has result=%s, which is generic; name a concrete type", job.TypeName, job.Result)
		return
	}
	if bad := checkEncodable(obj.Type(), job.Result, l.walk()); bad != nil {
		l.errs.add(pos, "result=%s: %s", job.Result, bad.describe(l.qualifier()))
	}
}

// structType checks that spec declares a plain struct type, what (job,
// event, listener) being what the annotation makes it, and returns it;
// ok is false if it is not one (a problem recorded, or a type error the
// compiler reports).
func (l *loader) structType(spec *ast.TypeSpec, what string) (*types.Named, *types.Struct, bool) {
	pos := l.position(spec.Name.Pos())
	name := spec.Name.Name
	switch {
	case spec.Assign.IsValid():
		l.errs.add(pos, "%s is an alias; put //job: on the struct type it stands for", name)
		return nil, nil, false
	case slices.Contains(model.Locals, name):
		l.errs.add(pos, "%s is a name the generated code uses for a parameter (%s); give the %s type another name", name, strings.Join(model.Locals, ", "), what)
		return nil, nil, false
	case spec.TypeParams != nil:
		l.errs.add(pos, "%s is generic; a %s type must not have type parameters, since the worker decodes into one concrete type", name, what)
		return nil, nil, false
	}
	obj, ok := l.pkg.TypesInfo.Defs[spec.Name].(*types.TypeName)
	if !ok {
		return nil, nil, false // a type error the compiler reports
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		return nil, nil, false
	}
	st, ok := named.Underlying().(*types.Struct)
	if !ok {
		l.errs.add(pos, "%s is not a struct (its type is %s); //job: belongs on a struct type", name, types.TypeString(named.Underlying(), l.qualifier()))
		return nil, nil, false
	}
	return named, st, true
}

func (l *loader) qualifier() types.Qualifier { return types.RelativeTo(l.pkg.Types) }

// checkFields checks that msgpack can encode every carried field, that
// something is carried, and that no field is named like one of methods,
// the methods generated on every type of its kind (what).
func (l *loader) checkFields(pos token.Position, name string, st *types.Struct, methods []string, what string) {
	n := 0
	for i := range st.NumFields() {
		f := st.Field(i)
		fpos := l.position(f.Pos())
		if slices.Contains(methods, f.Name()) {
			l.errs.add(fpos, "field %s.%s clashes with the method %s that jobgen generates on every %s; rename the field", name, f.Name(), f.Name(), what)
		}
		if !carried(st, i) {
			continue
		}
		n++
		if bad := checkEncodable(f.Type(), f.Name(), l.walk()); bad != nil {
			l.errs.add(fpos, "%s", bad.describe(l.qualifier()))
		}
	}
	if st.NumFields() > 0 && n == 0 {
		l.errs.add(pos, "%s has no exported field: msgpack carries only exported fields to the worker, so the %s would arrive empty; export the fields it needs", name, what)
	}
}

// checkMethods reports methods named like generated ones, and records
// the Handle and Failed methods.
func (l *loader) checkMethods(named *types.Named, job *model.Job, methods []string) {
	name := named.Obj().Name()
	for i := range named.NumMethods() {
		m := named.Method(i)
		if slices.Contains(methods, m.Name()) {
			l.errs.add(l.position(m.Pos()), "method %s.%s clashes with the method of that name that jobgen generates on every job; rename it", name, m.Name())
		}
	}
	valueSet := types.NewMethodSet(named)
	ptrSet := types.NewMethodSet(types.NewPointer(named))
	if sel := ptrSet.Lookup(nil, "Handle"); sel != nil {
		m, _ := sel.Obj().(*types.Func)
		needs := len(job.Options.Needs) > 0
		switch {
		case needs && job.Result != "" && (m == nil || !l.isStepHandle(m, job)):
			l.errs.add(l.position(sel.Obj().Pos()), "%s.Handle is not Handle(ctx context.Context, in %s) (%s, error), as needs= and result=%s want; give it that signature to handle the job itself, or rename it", name, job.InputsType(), job.Result, job.Result)
		case needs && (m == nil || !l.isStepHandle(m, job)):
			l.errs.add(l.position(sel.Obj().Pos()), "%s.Handle is not Handle(ctx context.Context, in %s) error, as needs= wants; give it that signature to handle the job itself, or rename it", name, job.InputsType())
		case !needs && job.Result != "" && (m == nil || !l.isResultHandle(m, job.Result)):
			l.errs.add(l.position(sel.Obj().Pos()), "%s.Handle is not Handle(ctx context.Context) (%s, error), as result=%s wants; give it that signature to handle the job itself, or rename it", name, job.Result, job.Result)
		case !needs && job.Result == "" && (m == nil || !l.isHandle(m)):
			l.errs.add(l.position(sel.Obj().Pos()), "%s.Handle is not Handle(ctx context.Context) error; give it that signature to handle the job itself, or rename it", name)
		case valueSet.Lookup(nil, "Handle") == nil:
			l.errs.add(l.position(m.Pos()), "%s.Handle has a pointer receiver; declare it on the value, func (j %s) Handle(ctx context.Context) error, since jobs reach their handler by value", name, name)
		default:
			job.HandleMethod = true
		}
	}
	if sel := ptrSet.Lookup(nil, "Failed"); sel != nil {
		m, _ := sel.Obj().(*types.Func)
		if m == nil || !l.isFailed(m) {
			l.errs.add(l.position(sel.Obj().Pos()), "%s.Failed is not Failed(ctx context.Context, err error); give it that signature to make it the job's failed hook, or rename it", name)
		} else {
			job.FailedMethod = true
		}
	}
}

// isHandle reports whether m is Handle(context.Context) error.
func (l *loader) isHandle(m *types.Func) bool {
	sig := m.Signature()
	return sig.Params().Len() == 1 && isContext(sig.Params().At(0).Type()) &&
		sig.Results().Len() == 1 && isError(sig.Results().At(0).Type()) && !sig.Variadic()
}

// isResultHandle reports whether m is Handle(context.Context) (R, error)
// for R the package's type named result.
func (l *loader) isResultHandle(m *types.Func, result string) bool {
	sig := m.Signature()
	if sig.Params().Len() != 1 || !isContext(sig.Params().At(0).Type()) || sig.Results().Len() != 2 || sig.Variadic() {
		return false
	}
	n, ok := sig.Results().At(0).Type().(*types.Named)
	return ok && n.Obj().Pkg() == l.pkg.Types && n.Obj().Name() == result && isError(sig.Results().At(1).Type())
}

// isFailed reports whether m is Failed(context.Context, error).
func (l *loader) isFailed(m *types.Func) bool {
	sig := m.Signature()
	return sig.Params().Len() == 2 && isContext(sig.Params().At(0).Type()) &&
		isError(sig.Params().At(1).Type()) && sig.Results().Len() == 0 && !sig.Variadic()
}

func isContext(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func isError(t types.Type) bool { return types.Identical(t, types.Universe.Lookup("error").Type()) }

// checkPackageNames reports package-level declarations that the
// generated file would redeclare.
func (l *loader) checkPackageNames(laravel bool) {
	scope := l.pkg.Types.Scope()
	names := model.PackageNames
	if laravel {
		names = append(slices.Clone(names), model.LaravelNames...)
	}
	for _, n := range names {
		obj := scope.Lookup(n)
		if obj == nil {
			continue
		}
		what := "declares Handlers and Register and imports context, time and github.com/jobgen/jobgen/runtime"
		if laravel {
			what = "declares Handlers, Register and RegisterLaravel and imports context, time, github.com/jobgen/jobgen/runtime and github.com/jobgen/jobgen/laravel"
		}
		l.errs.add(l.position(obj.Pos()), "package-level %s clashes with the generated %s, which %s; rename it", n, model.OutputFile, what)
	}
}

// checkGroup checks the `group=` field of job and that group_limit comes
// with it.
func (l *loader) checkGroup(spec *ast.TypeSpec, job *model.Job) {
	pos := l.position(spec.Name.Pos())
	if job.GroupField == "" {
		if job.Options.GroupLimit > 0 {
			l.errs.add(pos, "%s: group_limit=%d limits the jobs of one group, but the annotation names no group; add group=Field, the field that holds the group (a customer or API token)", job.TypeName, job.Options.GroupLimit)
		}
		return
	}
	named, st, ok := l.structType(spec, "job")
	if !ok {
		return
	}
	for i := range named.NumMethods() {
		if m := named.Method(i); m.Name() == "JobGroup" {
			l.errs.add(l.position(m.Pos()), "%s has a method JobGroup, which group=%s generates; remove one of them", job.TypeName, job.GroupField)
		}
	}
	var names []string
	for i := range st.NumFields() {
		f := st.Field(i)
		names = append(names, f.Name())
		if f.Name() != job.GroupField {
			continue
		}
		if f.Name() == "JobGroup" {
			l.errs.add(l.position(f.Pos()), "field %s.JobGroup clashes with the method JobGroup that group= generates; rename the field", job.TypeName)
		}
		b, ok := f.Type().Underlying().(*types.Basic)
		if !ok || b.Info()&(types.IsString|types.IsInteger) == 0 {
			l.errs.add(l.position(f.Pos()), "group=%s: field %s.%s is of type %s; the group must be a string or an integer", job.GroupField, job.TypeName, f.Name(), types.TypeString(f.Type(), l.qualifier()))
		}
		return
	}
	l.errs.add(pos, "group=%s: %s has no field %s; its fields: %s", job.GroupField, job.TypeName, job.GroupField, strings.Join(names, ", "))
}
