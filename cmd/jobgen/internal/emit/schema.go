package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// SchemaMethods returns the methods of a job with a schema version above
// 1: JobVersion, which a dispatch writes into the envelope
// (runtime.VersionedJob).
func SchemaMethods(j model.Job) []jen.Code {
	if j.Wire.Version <= 1 {
		return nil
	}
	return []jen.Code{
		doc("JobVersion returns %d, the version of %s's wire schema (the version= key):\na dispatch writes it into the envelope, a worker that knows only older\nversions gives the job back for a newer one, and version %d jobs are\nupgraded with %s.Upgrade.", j.Wire.Version, j.TypeName, j.Wire.Version-1, j.Wire.Upgrade).
			Func().Params(jen.Id(j.TypeName)).Id("JobVersion").Params().Int().Block(jen.Return(jen.Lit(j.Wire.Version))),
	}
}

// SchemaOptions returns the route options of a job's Register call that
// its wire schema needs: the upgrade from its previous version, the keys
// it added since jobs were queued (from the schema lock), and lenient
// decoding.
func SchemaOptions(j model.Job) []jen.Code {
	var out []jen.Code
	if j.Wire.Upgrade != "" && j.Wire.Version > 1 {
		out = append(out, jen.Qual(runtimePkg, "UpgradeFrom").Call(jen.Lit(j.Wire.Version-1), jen.Id(j.Wire.Upgrade).Dot("Upgrade")))
	}
	if len(j.Wire.Optional) > 0 {
		keys := make([]jen.Code, len(j.Wire.Optional))
		for i, k := range j.Wire.Optional {
			keys[i] = jen.Lit(k)
		}
		out = append(out, jen.Qual(runtimePkg, "OptionalKeys").Types(jen.Id(j.TypeName)).Call(keys...))
	}
	if j.Wire.Lenient {
		out = append(out, jen.Qual(runtimePkg, "Lenient").Types(jen.Id(j.TypeName)).Call())
	}
	return out
}
