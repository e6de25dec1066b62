package emit

import (
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// JobMethods returns the methods of runtime.Job for j: JobName,
// JobOptions and EncodeJob.
func JobMethods(j model.Job) []jen.Code {
	t := j.TypeName
	return []jen.Code{
		doc("JobName returns %q, the wire name the router knows %s by.", j.Name, t).
			Func().Params(jen.Id(t)).Id("JobName").Params().String().
			Block(jen.Return(jen.Lit(j.Name))),

		doc("JobOptions returns the defaults from the //job: annotation of %s.", t).
			Func().Params(jen.Id(t)).Id("JobOptions").Params().Qual(runtimePkg, "JobOptions").
			Block(jen.Return(Options(j.Options))),

		doc("EncodeJob encodes the fields of the job with msgpack.").
			Func().Params(jen.Id("j").Id(t)).Id("EncodeJob").Params().Params(jen.Index().Byte(), jen.Error()).
			Block(jen.Return(jen.Qual(runtimePkg, "Encode").Call(jen.Id("j")))),
	}
}

// Options returns a runtime.JobOptions literal holding the set fields of
// o, in the order runtime.JobOptions declares them.
func Options(o model.Options) jen.Code {
	var fields []jen.Code
	add := func(name string, value jen.Code) {
		fields = append(fields, jen.Line().Id(name).Op(":").Add(value))
	}
	if o.Queue != "" {
		add("Queue", jen.Lit(o.Queue))
	}
	if o.Connection != "" {
		add("Connection", jen.Lit(o.Connection))
	}
	if o.Tries != 0 {
		add("Tries", jen.Lit(o.Tries))
	}
	if len(o.Backoff) > 0 {
		items := make([]jen.Code, len(o.Backoff))
		for i, d := range o.Backoff {
			items[i] = Duration(d)
		}
		add("Backoff", jen.Index().Qual(timePkg, "Duration").Values(items...))
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Timeout", o.Timeout}, {"RetryUntil", o.RetryUntil}} {
		if f.d != 0 {
			add(f.name, Duration(f.d))
		}
	}
	if o.MaxExceptions != 0 {
		add("MaxExceptions", jen.Lit(o.MaxExceptions))
	}
	if o.FailOnTimeout {
		add("FailOnTimeout", jen.True())
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Delay", o.Delay}, {"UniqueFor", o.UniqueFor}} {
		if f.d != 0 {
			add(f.name, Duration(f.d))
		}
	}
	if o.Encrypted {
		add("Encrypted", jen.True())
	}
	if len(o.Tags) > 0 {
		items := make([]jen.Code, len(o.Tags))
		for i, t := range o.Tags {
			items[i] = jen.Lit(t)
		}
		add("Tags", jen.Index().String().Values(items...))
	}
	if len(fields) > 0 {
		fields = append(fields, jen.Line())
	}
	return jen.Qual(runtimePkg, "JobOptions").Values(fields...)
}

// units are the time units Duration writes, largest first.
var units = []struct {
	d    time.Duration
	name string
}{
	{time.Hour, "Hour"},
	{time.Minute, "Minute"},
	{time.Second, "Second"},
	{time.Millisecond, "Millisecond"},
	{time.Microsecond, "Microsecond"},
	{time.Nanosecond, "Nanosecond"}, // divides every duration
}

// Duration writes d readably, in the largest unit that divides it:
// 10 * time.Second, time.Minute, 90 * time.Second, 1500 * time.Millisecond.
func Duration(d time.Duration) jen.Code {
	if d == 0 {
		return jen.Lit(0)
	}
	for _, u := range units {
		if d%u.d != 0 {
			continue
		}
		if d == u.d {
			return jen.Qual(timePkg, u.name)
		}
		return jen.Lit(int(d/u.d)).Op("*").Qual(timePkg, u.name)
	}
	return nil // not reached: time.Nanosecond divides every duration
}
