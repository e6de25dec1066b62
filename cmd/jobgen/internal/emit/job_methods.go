package emit

import (
	"reflect"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
	"github.com/jobgen/jobgen/internal/jobopt"
)

// JobMethods returns the methods of runtime.Job for j: JobName,
// JobOptions and EncodeJob, and for a job with debounce_key its
// DebounceKey (runtime.DebouncedJob), and for a job with a group field
// its JobGroup (runtime.GroupedJob).
func JobMethods(j model.Job) []jen.Code {
	t := j.TypeName
	methods := []jen.Code{
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
	if j.DebounceKey != "" {
		methods = append(methods, doc("DebounceKey returns the debounce key of the job: its field %s.", j.DebounceKey).
			Func().Params(jen.Id("j").Id(t)).Id("DebounceKey").Params().String().
			Block(jen.Return(jen.Qual(runtimePkg, "DebounceKeyOf").Call(jen.Id("j").Dot(j.DebounceKey)))))
	}
	if j.GroupField != "" {
		methods = append(methods, doc("JobGroup returns the job's fair group, its field %s (runtime.GroupedJob).", j.GroupField).
			Func().Params(jen.Id("j").Id(t)).Id("JobGroup").Params().String().
			Block(jen.Return(jen.Qual(runtimePkg, "GroupKey").Call(jen.Id("j").Dot(j.GroupField)))))
	}
	return methods
}

// Options returns a runtime.JobOptions literal holding the set fields of
// o, in the order runtime.JobOptions declares them (jobopt.All).
func Options(o model.Options) jen.Code {
	var fields []jen.Code
	ov := reflect.ValueOf(o)
	for _, opt := range jobopt.All {
		v := ov.FieldByName(opt.Name)
		if v.IsZero() || v.Kind() == reflect.Slice && v.Len() == 0 {
			continue
		}
		fields = append(fields, jen.Line().Id(opt.Name).Op(":").Add(optionValue(opt.Kind, v)))
	}
	if len(fields) > 0 {
		fields = append(fields, jen.Line())
	}
	return jen.Qual(runtimePkg, "JobOptions").Values(fields...)
}

// optionValue writes v, an option's value of kind k.
func optionValue(k jobopt.Kind, v reflect.Value) jen.Code {
	switch k {
	case jobopt.PositiveDuration:
		return Duration(time.Duration(v.Int()))
	case jobopt.Durations:
		items := make([]jen.Code, v.Len())
		for i := range items {
			items[i] = Duration(time.Duration(v.Index(i).Int()))
		}
		return jen.Index().Qual(timePkg, "Duration").Values(items...)
	case jobopt.Strings:
		items := make([]jen.Code, v.Len())
		for i := range items {
			items[i] = jen.Lit(v.Index(i).String())
		}
		return jen.Index().String().Values(items...)
	}
	return jen.Lit(v.Interface()) // a string, int or bool
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
