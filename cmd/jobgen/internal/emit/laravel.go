package emit

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// laravelPkg is the import path of the Laravel bridge.
const laravelPkg = "github.com/jobgen/jobgen/laravel"

// RegisterLaravel returns the RegisterLaravel function of a package with
// jobs annotated laravel=: it maps each to its PHP class (or string
// job) on a laravel.Mapper, under the job's wire name: laravel.MapEncrypted
// for an encrypted job, whose class is ShouldBeEncrypted.
func RegisterLaravel(p *model.Package) jen.Code {
	return doc("RegisterLaravel maps the jobs of package %s that stand for PHP jobs\n"+
		"(laravel=) to their classes in m, so that a laravel.Worker runs them with\n"+
		"the handlers Register routes and a laravel.Dispatcher pushes them as\n"+
		"Laravel payloads. Mapping problems are reported by m.Err.", p.Name).
		Func().Id("RegisterLaravel").Params(jen.Id("m").Op("*").Qual(laravelPkg, "Mapper")).
		BlockFunc(func(g *jen.Group) {
			for _, j := range p.Jobs {
				if j.Laravel == "" {
					continue
				}
				fn := "Map"
				switch {
				case strings.Contains(j.Laravel, "@"):
					fn = "MapString"
				case j.Options.Encrypted:
					// A ShouldBeEncrypted class: a Go dispatch seals
					// data.command as Laravel does.
					fn = "MapEncrypted"
				}
				g.Qual(laravelPkg, fn).Types(jen.Id(j.TypeName)).Call(jen.Id("m"), jen.Lit(j.Laravel), jen.Lit(j.Name))
			}
		})
}
