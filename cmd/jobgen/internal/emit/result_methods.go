package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// ResultMethods returns the methods of a job with a result
// (model.ResultMethods): Await and Result, each one call of runtime.
// A job without a result has none.
func ResultMethods(j model.Job) []jen.Code {
	if j.Result == "" {
		return nil
	}
	t, r := j.TypeName, j.Result
	idParam := jen.Id("id").String()
	return []jen.Code{
		doc("Await waits for the result of the %s job id, dispatched to the queue of\n"+
			"its options (runtime.AwaitOn for one sent elsewhere). ctx's deadline is the\n"+
			"timeout: past it Await returns a *runtime.AwaitTimeoutError. A job that\n"+
			"failed for good returns a *runtime.JobFailedError carrying its failure.", t).
			Func().Params(jen.Id("j").Id(t)).Id("Await").Params(ctxParam(), idParam).Params(jen.Id(r), jen.Error()).
			Block(jen.Return(jen.Qual(runtimePkg, "Await").Types(jen.Id(r)).Call(jen.Id("ctx"), jen.Id("j"), jen.Id("id")))),

		doc("Result reads the result of the %s job id without waiting: ok is false\n"+
			"while it has none (not finished, or expired after\n"+
			"runtime.EngineConfig.ResultRetention).", t).
			Func().Params(jen.Id("j").Id(t)).Id("Result").Params(ctxParam(), idParam).
			Params(jen.Id(r), jen.Bool(), jen.Error()).
			Block(jen.Return(jen.Qual(runtimePkg, "ReadJobResult").Types(jen.Id(r)).Call(jen.Id("ctx"), jen.Id("j"), jen.Id("id")))),
	}
}
