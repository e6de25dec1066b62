package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// Handlers returns the Handlers interface: one method per job without a
// Handle method of its own, so that a missing handler is a compile
// error. It is emitted, empty, even when every job has a Handle method,
// so that Register has the same signature in every package.
func Handlers(p *model.Package) jen.Code {
	var methods []jen.Code
	for _, j := range p.Jobs {
		if j.HandleMethod {
			continue
		}
		if len(j.Needs) > 0 {
			methods = append(methods, stepHandler(j)...)
			continue
		}
		if j.Result != "" {
			methods = append(methods,
				jen.Commentf("%s handles %s jobs (wire name %q) and returns the job's result.", handlerMethod(j), j.TypeName, j.Name),
				jen.Id(handlerMethod(j)).Params(ctxParam(), jen.Id("job").Id(j.TypeName)).Params(jen.Id(j.Result), jen.Error()),
			)
			continue
		}
		methods = append(methods,
			jen.Commentf("%s handles %s jobs (wire name %q).", handlerMethod(j), j.TypeName, j.Name),
			jen.Id(handlerMethod(j)).Params(ctxParam(), jen.Id("job").Id(j.TypeName)).Error(),
		)
	}
	methods = append(methods, listenerHandlers(p)...) // events.go
	text := "Handlers handles the jobs of package %s that have no Handle method of\ntheir own, one method per job. Register routes each job to its method."
	if len(p.Listeners) > 0 {
		text = "Handlers handles the jobs of package %s that have no Handle method of\ntheir own, one method per job, and the events of its listeners, one method\nper listener. Register routes each job and listener to its method."
	}
	if len(methods) == 0 {
		text = "Handlers is empty: every job of package %s has a Handle method of its\nown. Pass nil to Register."
	}
	return doc(text, p.Name).Type().Id("Handlers").Interface(methods...)
}

// stepHandler is the Handlers method of j, a job with needs: it takes
// the job's inputs as well.
func stepHandler(j model.Job) []jen.Code {
	params := []jen.Code{ctxParam(), jen.Id("job").Id(j.TypeName), jen.Id("in").Id(j.InputsType())}
	if j.Result != "" {
		return []jen.Code{
			jen.Commentf("%s handles %s jobs (wire name %q), steps handed the results of the steps they need, and returns the job's result.", handlerMethod(j), j.TypeName, j.Name),
			jen.Id(handlerMethod(j)).Params(params...).Params(jen.Id(j.Result), jen.Error()),
		}
	}
	return []jen.Code{
		jen.Commentf("%s handles %s jobs (wire name %q), steps handed the results of the steps they need.", handlerMethod(j), j.TypeName, j.Name),
		jen.Id(handlerMethod(j)).Params(params...).Error(),
	}
}

// handlerMethod is the Handlers method of job j.
func handlerMethod(j model.Job) string { return "Handle" + j.TypeName }

// Register returns the Register function, which routes every job of p
// to its handler with runtime.Register.
func Register(p *model.Package) jen.Code {
	text := "Register routes every job of package %s to its handler in r: a job\n" +
		"with a Handle method of its own to that method, every other job to its\n" +
		"method of h. A job with a Failed method gets it as its failed hook.\n"
	if len(p.Listeners) > 0 {
		text += "Each listener's jobs go to its method of h.\n"
	}
	return doc(text+"Registration problems (a name registered twice) are reported by r.Err.", p.Name).
		Func().Id("Register").Params(jen.Id("r").Op("*").Qual(runtimePkg, "Router"), jen.Id("h").Id("Handlers")).
		BlockFunc(func(g *jen.Group) {
			for _, j := range p.Jobs {
				g.Add(RegisterCall(j))
			}
			for _, li := range p.Listeners {
				g.Add(RegisterListenerCall(li))
			}
		})
}

// RegisterCall returns the runtime.Register call for one job.
func RegisterCall(j model.Job) jen.Code {
	handler := jen.Id("h").Dot(handlerMethod(j))
	needs := len(j.Needs) > 0
	switch {
	case j.HandleMethod && needs && j.Result != "":
		handler = jen.Qual(runtimePkg, "HandleStepResultMethod").Types(jen.Id(j.TypeName), jen.Id(j.InputsType()), jen.Id(j.Result))
	case j.HandleMethod && needs:
		handler = jen.Qual(runtimePkg, "HandleStepMethod").Types(jen.Id(j.TypeName), jen.Id(j.InputsType()))
	case j.HandleMethod && j.Result != "":
		handler = jen.Qual(runtimePkg, "HandleResultMethod").Types(jen.Id(j.TypeName), jen.Id(j.Result))
	case j.HandleMethod:
		handler = jen.Qual(runtimePkg, "HandleMethod").Types(jen.Id(j.TypeName))
	}
	args := []jen.Code{jen.Id("r"), jen.Lit(j.Name), handler}
	if needs {
		args = append(args, jen.Id(j.InputsDecoder()))
	}
	if j.FailedMethod {
		args = append(args, jen.Qual(runtimePkg, "OnFailed").Call(
			jen.Func().Params(ctxParam(), jen.Id("job").Id(j.TypeName), jen.Err().Error()).Block(
				jen.Id("job").Dot("Failed").Call(jen.Id("ctx"), jen.Err()),
			),
		))
	}
	args = append(args, SchemaOptions(j)...) // schema.go
	switch {
	case needs && j.Result != "":
		return jen.Qual(runtimePkg, "RegisterStepResult").Types(jen.Id(j.TypeName), jen.Id(j.InputsType()), jen.Id(j.Result)).Call(args...)
	case needs:
		return jen.Qual(runtimePkg, "RegisterStep").Types(jen.Id(j.TypeName), jen.Id(j.InputsType())).Call(args...)
	}
	if j.Result != "" {
		return jen.Qual(runtimePkg, "RegisterResult").Types(jen.Id(j.TypeName), jen.Id(j.Result)).Call(args...)
	}
	return jen.Qual(runtimePkg, "Register").Types(jen.Id(j.TypeName)).Call(args...)
}
