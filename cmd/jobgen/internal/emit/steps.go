package emit

import (
	"go/token"
	"strconv"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// StepDecls returns what a job with needs (`needs=`) gets: the struct of
// its inputs, the function that decodes them, and the StepMethods AddTo
// and SpawnAfter, whose parameters are the steps it needs, typed, so
// that a missing or mistyped parent does not compile. Each body is one
// call, or straight-line calls, into runtime. A job without needs gets
// none.
func StepDecls(j model.Job) []jen.Code {
	if len(j.Needs) == 0 {
		return nil
	}
	return []jen.Code{inputsType(j), inputsDecoder(j), addTo(j), spawnAfter(j)}
}

// inputsType is the struct of j's inputs: a field per need, named for
// the needed job, holding its result or, for a list, their results.
func inputsType(j model.Job) jen.Code {
	fields := make([]jen.Code, 0, len(j.Needs))
	for _, n := range j.Needs {
		if n.List {
			fields = append(fields,
				doc("%s are the results of the %s steps, in the order given; the zero\n%s for a step that failed and that the workflow went on without.", n.TypeName, n.TypeName, n.Result).
					Id(n.TypeName).Index().Id(n.Result))
			continue
		}
		fields = append(fields,
			doc("%s is the result of the %s step; the zero %s if that step\nfailed and the workflow went on without it.", n.TypeName, n.TypeName, n.Result).
				Id(n.TypeName).Id(n.Result))
	}
	return doc("%s are the results a %s step is handed from the steps it needs\n(needs=%s), decoded.", j.InputsType(), j.TypeName, needsList(j)).
		Type().Id(j.InputsType()).Struct(fields...)
}

// needsList is the value of j's `needs=`, as written.
func needsList(j model.Job) string {
	names := make([]string, len(j.Needs))
	for i, n := range j.Needs {
		names[i] = n.TypeName
		if n.List {
			names[i] = "[]" + n.TypeName
		}
	}
	return strings.Join(names, ",")
}

// inputsDecoder decodes j's inputs, need by need, in order.
func inputsDecoder(j model.Job) jen.Code {
	in := j.InputsType()
	return doc("%s decodes the inputs of a %s step, for runtime.RegisterStep.", j.InputsDecoder(), j.TypeName).
		Func().Id(j.InputsDecoder()).Params(jen.Id("in").Op("*").Qual(runtimePkg, "StepInputs")).Params(jen.Id(in), jen.Error()).
		BlockFunc(func(g *jen.Group) {
			g.Var().Id("v").Id(in)
			g.Var().Err().Error()
			for i, n := range j.Needs {
				decode := jen.Qual(runtimePkg, "Input")
				if n.List {
					decode = jen.Qual(runtimePkg, "InputList")
				}
				g.If(
					jen.List(jen.Id("v").Dot(n.TypeName), jen.Err()).Op("=").Add(decode).Types(jen.Id(n.Result)).Call(jen.Id("in"), jen.Lit(i)),
					jen.Err().Op("!=").Nil(),
				).Block(jen.Return(jen.Id(in).Values(), jen.Err()))
			}
			g.Return(jen.Id("v"), jen.Nil())
		})
}

// stepParams are the parameters of AddTo and SpawnAfter that take the
// steps j needs, and the Needs call that passes them on.
func stepParams(j model.Job) (params []jen.Code, needs jen.Code) {
	names := paramNames(j)
	args := make([]jen.Code, len(j.Needs))
	for i, n := range j.Needs {
		step := jen.Qual(runtimePkg, "Step")
		if n.List {
			step = jen.Qual(runtimePkg, "Steps")
		}
		params = append(params, jen.Id(names[i]).Add(step).Types(jen.Id(n.TypeName)))
		args[i] = jen.Id(names[i]).Dot("Need").Call()
	}
	return params, jen.Append(
		jen.Index().Qual(runtimePkg, "StepOption").Values(jen.Qual(runtimePkg, "Needs").Call(args...)),
		jen.Id("opts").Op("..."),
	).Op("...")
}

// stepLocals are the names AddTo and SpawnAfter use besides the
// parameters of the steps: a step parameter named like one of them gets
// a suffix.
var stepLocals = []string{"append", "context", "ctx", "j", "opts", "runtime", "wf"}

// paramNames names the step parameters of j's AddTo and SpawnAfter after
// the jobs they need, in lower camel case: charge, reserveStock; one
// that would be a keyword or shadow a name the body uses, or repeat
// another, gets the suffix Step or Steps (and a number if need be).
func paramNames(j model.Job) []string {
	used := map[string]bool{}
	for _, s := range stepLocals {
		used[s] = true
	}
	names := make([]string, len(j.Needs))
	for i, n := range j.Needs {
		name := lowerCamel(n.TypeName)
		if token.IsKeyword(name) || used[name] {
			suffix := "Step"
			if n.List {
				suffix = "Steps"
			}
			name += suffix
			for k := 2; used[name]; k++ {
				name = lowerCamel(n.TypeName) + suffix + strconv.Itoa(k)
			}
		}
		used[name] = true
		names[i] = name
	}
	return names
}

// lowerCamel lowers the leading capitals of an identifier, leaving the
// last of several when a lower-case letter follows it: Charge -> charge,
// ReserveStock -> reserveStock, HTTPCall -> httpCall, ID -> id.
func lowerCamel(s string) string {
	rs := []rune(s)
	n := 0
	for n < len(rs) && unicode.IsUpper(rs[n]) {
		n++
	}
	if n > 1 && n < len(rs) && unicode.IsLower(rs[n]) {
		n--
	}
	for i := range n {
		rs[i] = unicode.ToLower(rs[i])
	}
	return string(rs)
}

// addTo adds the job to a workflow as a step that needs the steps given.
func addTo(j model.Job) jen.Code {
	params, needs := stepParams(j)
	params = append([]jen.Code{jen.Id("wf").Op("*").Qual(runtimePkg, "Workflow")}, params...)
	params = append(params, jen.Id("opts").Op("...").Qual(runtimePkg, "StepOption"))
	return doc("AddTo adds the job to wf as a step that runs once the steps given have\n"+
		"succeeded, handed their results (needs=%s), and returns its handle.\n"+
		"The steps given must be steps of wf. opts set the step's other options\n"+
		"(runtime.After, runtime.StepOnQueue).", needsList(j)).
		Func().Params(jen.Id("j").Id(j.TypeName)).Id("AddTo").Params(params...).
		Qual(runtimePkg, "Step").Types(jen.Id(j.TypeName)).
		Block(jen.Return(jen.Qual(runtimePkg, "AddStep").Call(jen.Id("wf"), jen.Id("j"), needs)))
}

// spawnAfter adds the job, from a running step, to that step's workflow.
func spawnAfter(j model.Job) jen.Code {
	params, needs := stepParams(j)
	params = append([]jen.Code{ctxParam()}, params...)
	params = append(params, jen.Id("opts").Op("...").Qual(runtimePkg, "StepOption"))
	return doc("SpawnAfter adds the job to the workflow of the step running with ctx, as\n"+
		"a step that runs once the running step and the steps given have\n"+
		"succeeded, handed the results of the steps given (needs=%s). The\n"+
		"steps given must be steps of that workflow. Outside a step it returns\n"+
		"runtime.ErrNotAStep.", needsList(j)).
		Func().Params(jen.Id("j").Id(j.TypeName)).Id("SpawnAfter").Params(params...).
		Params(jen.Qual(runtimePkg, "Step").Types(jen.Id(j.TypeName)), jen.Error()).
		Block(jen.Return(jen.Qual(runtimePkg, "Spawn").Call(jen.Id("ctx"), jen.Id("j"), needs)))
}
