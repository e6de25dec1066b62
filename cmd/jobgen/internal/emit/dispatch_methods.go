package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// DispatchMethods returns the typed dispatch methods of j. Dispatch,
// DispatchIf and DispatchUnless send the job; DispatchTx writes it into
// an SQL transaction's outbox; Delay, At, OnQueue,
// OnConnection and WithChain start a *runtime.PendingDispatch, on which
// the same setters chain and whose Dispatch sends it; DispatchSync runs
// the handler in place. Where a dispatch goes is runtime's business
// (runtime.DispatcherFor).
func DispatchMethods(j model.Job) []jen.Code {
	t := j.TypeName
	recv := jen.Id("j").Id(t)
	pending := func(method string, param jen.Code, arg jen.Code) jen.Code {
		return jen.Func().Params(recv.Clone()).Id(method).Params(param).Op("*").Qual(runtimePkg, "PendingDispatch").
			Block(jen.Return(jen.Qual(runtimePkg, "NewPendingDispatch").Call(jen.Id("j")).Dot(method).Call(arg)))
	}
	idErr := func() []jen.Code { return []jen.Code{jen.String(), jen.Error()} }
	return []jen.Code{
		doc("Dispatch sends the job with its annotated options and returns its ID.\n" +
			"The dispatcher is the one runtime.WithDispatcher put on ctx, else the one\n" +
			"runtime.SetConnection named for the job's connection, else the one set\n" +
			"with runtime.SetDefaultDispatcher.").
			Func().Params(recv.Clone()).Id("Dispatch").Params(ctxParam()).Params(idErr()...).
			Block(jen.Return(jen.Qual(runtimePkg, "Dispatch").Call(jen.Id("ctx"), jen.Id("j")))),

		doc("DispatchTx writes the job, with its annotated options, into the outbox in\n"+
			"tx, and returns its ID: the job exists if and only if tx commits, and a\n"+
			"relay then pushes it (docs/outbox.md). tx is a *sql.Tx, or a pgx.Tx\n"+
			"through pgxoutbox.Tx.").
			Func().Params(recv.Clone()).Id("DispatchTx").Params(ctxParam(), jen.Id("tx").Qual(runtimePkg, "Tx")).Params(idErr()...).
			Block(jen.Return(jen.Qual(runtimePkg, "DispatchTx").Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("j")))),

		doc("Delay starts a dispatch of the job that makes it ready only after d.").
			Add(pending("Delay", jen.Id("d").Qual(timePkg, "Duration"), jen.Id("d"))),

		doc("At starts a dispatch of the job that makes it ready at t; a t already\n" +
			"past makes it ready at once. Through DispatchTx, t is read against the\n" +
			"database's clock as the relay claims the row.").
			Add(pending("At", jen.Id("t").Qual(timePkg, "Time"), jen.Id("t"))),

		doc("OnQueue starts a dispatch of the job to queue q.").
			Add(pending("OnQueue", jen.Id("q").String(), jen.Id("q"))),

		doc("OnConnection starts a dispatch of the job through the dispatcher named c.").
			Add(pending("OnConnection", jen.Id("c").String(), jen.Id("c"))),

		doc("WithChain starts a dispatch of the job after which jobs run in order,\neach only if the one before it succeeded.").
			Add(pending("WithChain", jen.Id("jobs").Op("...").Qual(runtimePkg, "Job"), jen.Id("jobs").Op("..."))),

		doc("DispatchIf dispatches the job if cond holds; otherwise it returns \"\", nil.").
			Func().Params(recv.Clone()).Id("DispatchIf").Params(ctxParam(), jen.Id("cond").Bool()).Params(idErr()...).
			Block(jen.Return(jen.Qual(runtimePkg, "DispatchIf").Call(jen.Id("ctx"), jen.Id("cond"), jen.Id("j")))),

		doc("DispatchUnless dispatches the job unless cond holds.").
			Func().Params(recv.Clone()).Id("DispatchUnless").Params(ctxParam(), jen.Id("cond").Bool()).Params(idErr()...).
			Block(jen.Return(jen.Qual(runtimePkg, "DispatchUnless").Call(jen.Id("ctx"), jen.Id("cond"), jen.Id("j")))),

		doc("DispatchSync runs the job's handler now, in this goroutine, through the\nrouter of runtime.WithRouter or runtime.SetDefaultRouter.").
			Func().Params(recv.Clone()).Id("DispatchSync").Params(ctxParam()).Error().
			Block(jen.Return(jen.Qual(runtimePkg, "DispatchSync").Call(jen.Id("ctx"), jen.Id("j")))),
	}
}
