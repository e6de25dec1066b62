package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// ListenerMethods returns the methods of runtime.Listener for li:
// ListenerName and ListenerOptions.
func ListenerMethods(li model.Listener) []jen.Code {
	t := li.TypeName
	return []jen.Code{
		doc("ListenerName returns %q, the wire name of listener %s's jobs.", li.Name, t).
			Func().Params(jen.Id(t)).Id("ListenerName").Params().String().
			Block(jen.Return(jen.Lit(li.Name))),

		doc("ListenerOptions returns the options of %s's jobs, from its annotation.", t).
			Func().Params(jen.Id(t)).Id("ListenerOptions").Params().Qual(runtimePkg, "JobOptions").
			Block(jen.Return(Options(li.Options))),
	}
}

// EventMethods returns the Fire method of ev: one runtime.Fire call that
// lists its listeners.
func EventMethods(ev model.Event) []jen.Code {
	t := ev.TypeName
	args := []jen.Code{jen.Id("ctx"), jen.Id("e")}
	for _, li := range ev.Listeners {
		fn := "QueuedListener"
		if li.Sync {
			fn = "SyncListener"
		}
		args = append(args, jen.Line().Qual(runtimePkg, fn).Types(jen.Id(li.TypeName)).Call(jen.Id("e")))
	}
	if len(ev.Listeners) > 0 {
		args = append(args, jen.Line())
	}
	return []jen.Code{
		doc("Fire fires the event (Laravel's event()): its synchronous listeners run\n" +
			"now, in order, and stop Fire at the first error; then one job per queued\n" +
			"listener is pushed, all in one atomic call. See runtime.Fire.").
			Func().Params(jen.Id("e").Id(t)).Id("Fire").Params(ctxParam()).Error().
			Block(jen.Return(jen.Qual(runtimePkg, "Fire").Call(args...))),
	}
}

// listenerHandler is the Handlers method of listener li.
func listenerHandler(li model.Listener) string { return "Handle" + li.TypeName }

// listenerHandlers returns the Handlers methods of p's listeners.
func listenerHandlers(p *model.Package) []jen.Code {
	var methods []jen.Code
	for _, li := range p.Listeners {
		how := "queued, wire name " + li.Name
		if li.Sync {
			how = "run inside Fire"
		}
		methods = append(methods,
			jen.Commentf("%s handles %s for listener %s (%s).", listenerHandler(li), li.Event, li.TypeName, how),
			jen.Id(listenerHandler(li)).Params(ctxParam(), jen.Id("e").Id(li.Event)).Error(),
		)
	}
	return methods
}

// RegisterListenerCall returns the runtime.RegisterListener call for li.
func RegisterListenerCall(li model.Listener) jen.Code {
	return jen.Qual(runtimePkg, "RegisterListener").Types(jen.Id(li.TypeName)).Call(jen.Id("r"), jen.Id("h").Dot(listenerHandler(li)))
}
