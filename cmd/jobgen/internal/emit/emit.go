// Package emit writes the Go file jobgen generates for a package, with
// jennifer, from the model alone. The generated code is thin glue: every
// method and function is one call into github.com/jobgen/jobgen/runtime,
// so behaviour is fixed there without regenerating anyone's code.
package emit

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// Import paths of the packages the generated file uses.
const (
	runtimePkg = "github.com/jobgen/jobgen/runtime"
	contextPkg = "context"
	timePkg    = "time"
)

// File returns the generated file for p, gofmt'd. The same package
// always gives the same bytes: jobs come in the order of p.Jobs, which
// the loader sorts by type name.
func File(p *model.Package) ([]byte, error) {
	f := jen.NewFilePathName(p.Path, p.Name)
	f.HeaderComment(model.Header)
	f.ImportName(runtimePkg, "runtime")
	f.ImportName(contextPkg, "context")
	f.ImportName(timePkg, "time")

	f.Add(Handlers(p))
	f.Line()
	f.Add(Register(p))
	if p.HasLaravel() {
		f.ImportName(laravelPkg, "laravel")
		f.Line()
		f.Add(RegisterLaravel(p))
	}
	for _, j := range p.Jobs {
		f.Line()
		for _, c := range JobMethods(j) {
			f.Add(c)
			f.Line()
		}
		for _, c := range SchemaMethods(j) { // schema.go
			f.Add(c)
			f.Line()
		}
		for _, c := range DispatchMethods(j) {
			f.Add(c)
			f.Line()
		}
		for _, c := range ResultMethods(j) {
			f.Add(c)
			f.Line()
		}
		for _, c := range StepDecls(j) { // steps.go
			f.Add(c)
			f.Line()
		}
	}
	for _, ev := range p.Events {
		f.Line()
		for _, c := range EventMethods(ev) {
			f.Add(c)
			f.Line()
		}
	}
	for _, li := range p.Listeners {
		f.Line()
		for _, c := range ListenerMethods(li) {
			f.Add(c)
			f.Line()
		}
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s for package %s: %w", model.OutputFile, p.Path, err)
	}
	// jennifer's output is gofmt'd with one import block; group the
	// standard library first, as goimports does. FormatOnly never adds or
	// removes an import.
	src, err := imports.Process(model.OutputFile, buf.Bytes(), &imports.Options{FormatOnly: true, Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return nil, fmt.Errorf("format %s for package %s: %w", model.OutputFile, p.Path, err)
	}
	return src, nil
}

// doc returns text as line comments, one per line of text, followed by a
// new line: jennifer's Comment would turn several lines into a block
// comment.
func doc(format string, args ...any) *jen.Statement {
	s := &jen.Statement{}
	for _, line := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		s.Comment(line).Line()
	}
	return s
}

// ctxParam is the parameter "ctx context.Context".
func ctxParam() *jen.Statement { return jen.Id("ctx").Qual(contextPkg, "Context") }
