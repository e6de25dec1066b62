package load

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// Workflows: `needs=Charge,[]SendEmail` makes a job a step handed the
// results of other jobs of its package. Each needed job must be one that
// declares `result=`, and the needs of the package's jobs must have no
// cycle, since a workflow adds a step only after the steps it needs.

// keyPos returns the position of key's token (key=value, or the bare
// key) in the annotation lines doc, or the zero Position if no line
// sets it.
func (l *loader) keyPos(doc []*ast.Comment, key string) token.Position {
	for _, c := range doc {
		text, kind := classify(c.Text)
		if kind != annotationLine {
			continue
		}
		for _, w := range fields(text) {
			if k, _, _ := strings.Cut(w.text, "="); k == key {
				return l.position(c.Slash + token.Pos(len(prefix)+w.offset))
			}
		}
	}
	return token.Position{}
}

// linkNeeds resolves the `needs=` of the package's jobs: each names a job
// of jobs (the sound ones) that declares a result, once, and not the job
// itself, and no job needs itself through others. It fills Job.Needs and
// turns Options.Needs from type names into wire names. annotated holds
// every type annotated as a job, sound or not: a need of one that has
// problems of its own is not reported again.
func (l *loader) linkNeeds(jobs []foundJob, annotated map[string]bool) {
	byType := map[string]*foundJob{}
	for i := range jobs {
		byType[jobs[i].job.TypeName] = &jobs[i]
	}
	for i := range jobs {
		f := &jobs[i]
		if len(f.job.Options.Needs) == 0 {
			continue
		}
		j := &f.job
		at := f.needsPos
		if j.Laravel != "" {
			l.errs.add(at, "%s sets both needs and laravel: a job that needs results runs only as a step of a workflow, which a Laravel app does not dispatch; drop one of them", j.TypeName)
		}
		seen := map[string]bool{}
		var wire []string
		for _, item := range j.Options.Needs {
			name, list := strings.CutPrefix(item, "[]")
			switch {
			case name == j.TypeName:
				l.errs.add(at, "needs=%s: %s needs itself; a step is handed the results of steps added before it", item, j.TypeName)
				continue
			case seen[name]:
				l.errs.add(at, "needs=%s: %s is needed twice; name each job once (its inputs have one field per job)", item, name)
				continue
			}
			seen[name] = true
			dep, ok := byType[name]
			if !ok {
				if !annotated[name] {
					l.errs.add(at, "needs=%s: %s", item, l.notAJob(name))
				}
				continue
			}
			if dep.job.Result == "" {
				l.errs.add(at, "needs=%s: %s declares no result; add result= to its annotation, the type its handler returns", item, name)
				continue
			}
			n := model.Need{TypeName: name, Name: dep.job.Name, Result: dep.job.Result, List: list}
			j.Needs = append(j.Needs, n)
			wire = append(wire, n.WireName())
		}
		j.Options.Needs = wire
		l.checkInputsNames(*j)
	}
	l.checkNeedCycles(jobs, byType)
}

// notAJob says why name, needed by a job, is none of the package's jobs.
func (l *loader) notAJob(name string) string {
	obj := l.pkg.Types.Scope().Lookup(name)
	if _, ok := obj.(*types.TypeName); !ok {
		return "package " + l.pkg.Name + " declares no type " + name + "; name a job type of this package"
	}
	return name + " is not a job of package " + l.pkg.Name + ": it has no //job: annotation (an event or a listener is no job either); a step needs jobs of its own package"
}

// checkInputsNames reports package-level names that clash with the
// inputs struct and its decoder, which the generated file declares for
// a job with needs.
func (l *loader) checkInputsNames(j model.Job) {
	for _, name := range []string{j.InputsType(), j.InputsDecoder()} {
		if obj := l.pkg.Types.Scope().Lookup(name); obj != nil {
			l.errs.add(l.position(obj.Pos()), "package-level %s clashes with the generated %s, which declares it for the needs of %s; rename it", name, model.OutputFile, j.TypeName)
		}
	}
}

// checkNeedCycles reports each cycle among the needs of jobs once, at
// the `needs=` of the first job of the cycle by type name.
func (l *loader) checkNeedCycles(jobs []foundJob, byType map[string]*foundJob) {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	reported := map[string]bool{}
	var path []string
	var visit func(name string)
	visit = func(name string) {
		state[name] = onPath
		path = append(path, name)
		for _, n := range byType[name].job.Needs {
			switch state[n.TypeName] {
			case unseen:
				visit(n.TypeName)
			case onPath:
				cycle := slices.Clone(path[slices.Index(path, n.TypeName):])
				l.reportCycle(cycle, byType, reported)
			}
		}
		path = path[:len(path)-1]
		state[name] = done
	}
	names := make([]string, 0, len(jobs))
	for _, f := range jobs {
		names = append(names, f.job.TypeName)
	}
	slices.Sort(names)
	for _, name := range names {
		if state[name] == unseen {
			visit(name)
		}
	}
}

// reportCycle reports cycle (each job needs the next, the last the
// first) unless a rotation of it was reported.
func (l *loader) reportCycle(cycle []string, byType map[string]*foundJob, reported map[string]bool) {
	first := slices.Index(cycle, slices.Min(cycle))
	cycle = append(cycle[first:], cycle[:first]...)
	key := strings.Join(cycle, " ")
	if reported[key] {
		return
	}
	reported[key] = true
	shown := strings.Join(append(slices.Clone(cycle), cycle[0]), " → ")
	head := byType[cycle[0]].job
	need := cycle[1]
	for _, n := range head.Needs {
		if n.TypeName == need && n.List {
			need = "[]" + need
		}
	}
	l.errs.add(byType[cycle[0]].needsPos, "needs=%s: the needs of %s form a cycle, %s, so no workflow could be built (a step is added after the steps it needs); drop one of them", need, cycle[0], shown)
}

// isStepHandle reports whether m, the Handle method of a job with needs,
// is Handle(context.Context, <Type>Inputs) error, or with a result
// (R, error) for R the package's type named result. The inputs struct
// is generated, so it is read from the source: the loader hides the
// generated file.
func (l *loader) isStepHandle(m *types.Func, job *model.Job) bool {
	sig := m.Signature()
	if sig.Params().Len() != 2 || !isContext(sig.Params().At(0).Type()) || sig.Variadic() {
		return false
	}
	if !l.isInputsParam(m, job.InputsType()) {
		return false
	}
	if job.Result == "" {
		return sig.Results().Len() == 1 && isError(sig.Results().At(0).Type())
	}
	if sig.Results().Len() != 2 || !isError(sig.Results().At(1).Type()) {
		return false
	}
	n, ok := sig.Results().At(0).Type().(*types.Named)
	return ok && n.Obj().Pkg() == l.pkg.Types && n.Obj().Name() == job.Result
}

// isInputsParam reports whether the second parameter of m is written as
// the type named inputs.
func (l *loader) isInputsParam(m *types.Func, inputs string) bool {
	for _, file := range l.pkg.Syntax {
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Name.Pos() != m.Pos() {
				continue
			}
			var params []ast.Expr
			for _, f := range fd.Type.Params.List {
				for range max(len(f.Names), 1) {
					params = append(params, f.Type)
				}
			}
			id, ok := params[1].(*ast.Ident)
			return ok && id.Name == inputs
		}
	}
	return false
}
