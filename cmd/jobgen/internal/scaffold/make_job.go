// Package scaffold writes starter files for `jobgen make:job` from the
// templates embedded in github.com/jobgen/jobgen/templates.
package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	"unicode"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
	"github.com/jobgen/jobgen/internal/jobopt"
	"github.com/jobgen/jobgen/internal/qname"
	"github.com/jobgen/jobgen/templates"
)

// JobConfig says what job to make.
type JobConfig struct {
	// Name is the job type's name; it must be an exported Go identifier.
	Name string
	// Queue is the queue of the job's //job: line; "" leaves it out, so
	// the job goes to runtime's default queue.
	Queue string
	// Dir is the directory to write to, created if missing; "" means the
	// current directory.
	Dir string
}

// jobData is what the template is executed with; see package templates.
type jobData struct {
	Package  string
	Name     string
	Queue    string
	Generate bool
}

// MakeJob writes a starter job file, named after the job in snake_case
// (SendEmail goes to send_email.go), and returns its path. It never
// overwrites a file, and refuses a name the package already declares.
func MakeJob(cfg JobConfig) (string, error) {
	switch {
	case !token.IsIdentifier(cfg.Name) || !token.IsExported(cfg.Name):
		return "", fmt.Errorf("job name %q must be an exported Go identifier, such as SendEmail", cfg.Name)
	case slices.Contains(model.PackageNames, cfg.Name):
		return "", fmt.Errorf("job name %q is declared by the generated %s; pick another", cfg.Name, model.OutputFile)
	case strings.ContainsAny(cfg.Queue, " \t"):
		return "", fmt.Errorf("queue %q must not contain spaces", cfg.Queue)
	}
	if cfg.Queue != "" {
		if err := qname.Validate(cfg.Queue); err != nil {
			return "", err
		}
	}
	if cfg.Dir == "" {
		cfg.Dir = "."
	}
	dir, err := readDir(cfg.Dir)
	if err != nil {
		return "", err
	}
	if pos, ok := dir.decls[cfg.Name]; ok {
		return "", fmt.Errorf("%s: %s is declared already", pos, cfg.Name)
	}
	data := jobData{Package: dir.pkg, Name: cfg.Name, Queue: cfg.Queue, Generate: !dir.generates}
	src, err := render(data)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(cfg.Dir, snakeCase(cfg.Name)+".go")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("%s exists already; not overwriting it", path)
	}
	if err != nil {
		return "", err
	}
	if _, err := f.Write(src); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
}

// render executes the job template and formats the result.
func render(data jobData) ([]byte, error) {
	tmpl, err := template.New(templates.Job).Funcs(funcs).ParseFS(templates.FS, templates.Job)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("execute %s: %w", templates.Job, err)
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format %s output: %w", templates.Job, err)
	}
	return src, nil
}

// funcs are the functions the templates call; see package templates.
var funcs = template.FuncMap{"comment": comment, "keys": keys}

// keys lists the //job: keys of a job, from the table of keys
// (jobopt.Keys), which the generator's tests hold to the keys it reads.
func keys() string {
	return strings.Join(jobopt.JobKeys(), ", ")
}

// commentWidth is the widest line comment writes, "// " included.
const commentWidth = 76

// comment wraps text into line comments of at most commentWidth
// columns, breaking between words (a longer word gets a line of its
// own).
func comment(text string) string {
	var lines []string
	line := "//"
	for _, w := range strings.Fields(text) {
		if line != "//" && len(line)+1+len(w) > commentWidth {
			lines = append(lines, line)
			line = "//"
		}
		line += " " + w
	}
	return strings.Join(append(lines, line), "\n")
}

// dirInfo is what MakeJob needs to know of the target directory.
type dirInfo struct {
	// pkg is the package name of its Go files, or one made from its name.
	pkg string
	// generates is set if a file already has a //go:generate line running
	// jobgen.
	generates bool
	// decls are its package-level names, with their positions.
	decls map[string]token.Position
}

func readDir(dir string) (*dirInfo, error) {
	info := &dirInfo{decls: map[string]token.Position{}}
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("read package in %s: %w", dir, err)
		}
		if info.pkg == "" {
			info.pkg = f.Name.Name
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//go:generate ") && strings.Contains(c.Text, "jobgen") {
					info.generates = true
				}
			}
		}
		for _, d := range f.Decls {
			for _, id := range declNames(d) {
				info.decls[id.Name] = fset.Position(id.Pos())
			}
		}
	}
	if info.pkg == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		info.pkg = packageName(filepath.Base(abs))
	}
	return info, nil
}

// declNames returns the package-level names d declares.
func declNames(d ast.Decl) []*ast.Ident {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			return []*ast.Ident{d.Name}
		}
	case *ast.GenDecl:
		var ids []*ast.Ident
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				ids = append(ids, s.Name)
			case *ast.ValueSpec:
				ids = append(ids, s.Names...)
			}
		}
		return ids
	}
	return nil
}

// packageName makes a package name from a directory name: lower case
// letters and digits only, "jobs" if nothing is left.
func packageName(dir string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(dir) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || (unicode.IsDigit(r) && b.Len() > 0)) {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || !token.IsIdentifier(b.String()) {
		return "jobs"
	}
	return b.String()
}

// snakeCase turns a Go name into a file name: SendEmail -> send_email,
// HTTPCall -> http_call.
func snakeCase(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && !unicode.IsUpper(rs[i-1])
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
