// Package cli is jobgen's command line: argument parsing, and reporting
// of errors and results. The work is done by package generate (the
// generator), package scaffold (make:job) and, for the queue commands,
// package github.com/jobgen/jobgen/console, the same code an
// application's own binary runs them with.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/generate"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/load"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/scaffold"
	"github.com/jobgen/jobgen/console"
)

const usage = `usage:
  jobgen [-check] [-accept-break Type,...] [packages]
      Generate ` + model.OutputFile + ` for each package with //job: types. With
      no packages, the package in the current directory (as under
      //go:generate). -check writes nothing and fails if a file is stale.
      ` + model.LockFile + ` records the wire schema of every job, event and
      result; a change that breaks queued jobs is refused unless the job
      declares a new version, or -accept-break names its type.
  jobgen make:job Name [--queue q] [--dir d]
      Write a starter job file, name_in_snake_case.go, in d (default ".").
  jobgen queue:<command> [arguments] [flags]
      Inspect and manage the queues in Redis:
`

// Command is one run of jobgen.
type Command struct {
	// Dir is the working directory; "" means the process's.
	Dir string
	// Stdout and Stderr receive output.
	Stdout, Stderr io.Writer
	// Getenv reads the environment (the queue commands' Redis URL); nil
	// means os.Getenv.
	Getenv func(string) string
}

// Main runs jobgen with the process's arguments and exits.
func Main() {
	os.Exit((&Command{Stdout: os.Stdout, Stderr: os.Stderr}).Run(os.Args[1:]))
}

// Run runs jobgen with args (without the program name) and returns the
// exit code: 0 on success, 1 when something is wrong, 2 for bad usage.
func (c *Command) Run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "make:job":
			return c.makeJob(args[1:])
		case "help", "-h", "-help", "--help":
			if len(args) > 1 && console.Handles(args[1:]) {
				return c.console().Run(context.Background(), args)
			}
			c.writeUsage(c.Stdout)
			return 0
		}
		if console.Handles(args) {
			return c.console().Run(context.Background(), args)
		}
	}
	return c.generate(args)
}

// console runs the queue commands. It has no router: queue:work needs an
// application's handlers, so it runs from the application's binary.
func (c *Command) console() *console.Command {
	return &console.Command{Name: "jobgen", Stdout: c.Stdout, Stderr: c.Stderr, Getenv: c.Getenv}
}

// writeUsage writes jobgen's usage, queue commands included.
func (c *Command) writeUsage(w io.Writer) {
	fmt.Fprint(w, usage)
	c.console().WriteCommands(w)
	fmt.Fprintln(w, "\nRun jobgen <command> --help for a command's arguments and flags.")
}

func (c *Command) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() { c.writeUsage(c.Stderr) }
	return fs
}

func (c *Command) generate(args []string) int {
	fs := c.flags("jobgen")
	check := fs.Bool("check", false, "write nothing; fail if a generated file is stale")
	accept := fs.String("accept-break", "", "accept breaking changes to these types (comma-separated Go type or wire names) against "+model.LockFile+", which records them")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var opts generate.Options
	if *accept != "" {
		opts.AcceptBreak = strings.Split(*accept, ",")
	}
	res, err := generate.RunWith(load.Config{Dir: c.Dir, Patterns: fs.Args()}, opts)
	if err != nil {
		c.report(err)
		return 1
	}
	if fs.NArg() == 0 {
		for _, p := range res.Empty {
			fmt.Fprintf(c.Stderr, "jobgen: package %s has no //job: types; nothing to generate\n", p)
		}
	}
	if *check {
		stale, err := res.Stale()
		if err != nil {
			c.report(err)
			return 1
		}
		for _, p := range stale {
			fmt.Fprintf(c.Stderr, "%s is stale: run jobgen (go generate)\n", c.rel(p))
		}
		if len(stale) > 0 {
			return 1
		}
		return 0
	}
	if err := res.Write(); err != nil {
		c.report(err)
		return 1
	}
	for _, f := range res.Files {
		if f.Src == nil {
			fmt.Fprintf(c.Stderr, "jobgen: removed %s: package %s has no //job: types left\n", c.rel(f.Path), f.Package)
		}
	}
	return 0
}

// report prints err, one problem per line, with paths relative to the
// working directory where that is shorter.
func (c *Command) report(err error) {
	var list load.List
	if !errors.As(err, &list) {
		fmt.Fprintf(c.Stderr, "jobgen: %v\n", err)
		return
	}
	for _, e := range list {
		e := *e
		e.Pos.Filename = c.rel(e.Pos.Filename)
		fmt.Fprintln(c.Stderr, e.Error())
	}
	fmt.Fprintf(c.Stderr, "jobgen: %d %s; nothing written\n", len(list), plural(len(list), "problem"))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// rel returns path relative to the working directory if it lies inside it.
func (c *Command) rel(path string) string {
	if path == "" {
		return path
	}
	wd := c.Dir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return path
		}
	}
	wd, err := filepath.Abs(wd)
	if err != nil {
		return path
	}
	r, err := filepath.Rel(wd, path)
	if err != nil || strings.HasPrefix(r, "..") {
		return path
	}
	return r
}

func (c *Command) makeJob(args []string) int {
	fs := c.flags("jobgen make:job")
	var cfg scaffold.JobConfig
	fs.StringVar(&cfg.Queue, "queue", "", "queue of the job's //job: line")
	fs.StringVar(&cfg.Dir, "dir", ".", "directory to write the file in")
	// Flags may come before or after the name.
	var names []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(names) != 1 {
		fmt.Fprintf(c.Stderr, "jobgen make:job: want one job name, got %d (see jobgen help)\n", len(names))
		return 2
	}
	cfg.Name = names[0]
	if c.Dir != "" && !filepath.IsAbs(cfg.Dir) {
		cfg.Dir = filepath.Join(c.Dir, cfg.Dir)
	}
	path, err := scaffold.MakeJob(cfg)
	if err != nil {
		fmt.Fprintf(c.Stderr, "jobgen make:job: %v\n", err)
		return 1
	}
	fmt.Fprintf(c.Stdout, "created %s; run go generate to generate its methods\n", c.rel(path))
	return 0
}
