// Package generate runs the generator: it loads packages, emits one file
// for each package with jobs, and writes or checks the files.
package generate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/emit"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/load"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// File is a generated file, in memory.
type File struct {
	// Package is the import path of the file's package.
	Package string
	// Path is where the file goes: model.OutputFile in the package's
	// directory.
	Path string
	// Src is the file's content; nil means the package has no jobs left
	// and its earlier output is to be removed.
	Src []byte
}

// Result is what one run would do.
type Result struct {
	// Files are the files to write or remove, by package path.
	Files []File
	// Empty lists the packages that have no jobs and no earlier output.
	Empty []string
}

// Options are the choices of one run beyond which packages to load.
type Options struct {
	// AcceptBreak names the types (by Go type or wire name) whose
	// breaking changes against the schema lock are accepted on purpose;
	// the lock records them (package lock).
	AcceptBreak []string
}

// Run loads the packages cfg names and returns their generated files. It
// writes nothing. It refuses to replace a model.OutputFile that jobgen
// did not write.
func Run(cfg load.Config) (*Result, error) { return RunWith(cfg, Options{}) }

// RunWith is Run with opts. Besides each package's model.OutputFile it
// returns its schema lock (model.LockFile), checked against the one on
// disk: a breaking change is returned as a load.List.
func RunWith(cfg load.Config, opts Options) (*Result, error) {
	pkgs, err := load.Load(cfg)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	var refused load.List
	for _, p := range pkgs {
		lf, errs := checkLock(p, opts) // schema_lock.go
		if len(errs) > 0 {
			refused = append(refused, errs...)
			continue
		}
		if lf != nil {
			res.Files = append(res.Files, *lf)
		}
		path := filepath.Join(p.Dir, model.OutputFile)
		ours, err := load.IsOutput(path)
		if err != nil {
			return nil, err
		}
		if p.Empty() {
			if ours {
				res.Files = append(res.Files, File{Package: p.Path, Path: path})
			} else {
				res.Empty = append(res.Empty, p.Path)
			}
			continue
		}
		if _, err := os.Stat(path); err == nil && !ours {
			return nil, fmt.Errorf("%s exists and was not written by jobgen (its first line is not %q); rename it so jobgen can write its output there", path, "// "+model.Header)
		}
		src, err := emit.File(p)
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, File{Package: p.Path, Path: path, Src: src})
	}
	if len(refused) > 0 {
		return nil, refused
	}
	return res, nil
}

// Write writes each file whose content differs from what is on disk, and
// removes the earlier output of packages with no jobs left.
func (r *Result) Write() error {
	for _, f := range r.Files {
		if f.Src == nil {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		if old, err := os.ReadFile(f.Path); err == nil && bytes.Equal(old, f.Src) {
			continue
		}
		if err := os.WriteFile(f.Path, f.Src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Stale returns the paths of the files on disk that differ from r: out
// of date, missing, or to be removed.
func (r *Result) Stale() ([]string, error) {
	var stale []string
	for _, f := range r.Files {
		old, err := os.ReadFile(f.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if f.Src != nil {
				stale = append(stale, f.Path)
			}
		case err != nil:
			return nil, err
		case !bytes.Equal(old, f.Src):
			stale = append(stale, f.Path)
		}
	}
	return stale, nil
}
