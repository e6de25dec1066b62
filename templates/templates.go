// Package templates holds the text/template files that `jobgen make:job`
// writes starter files from. They are embedded, so the jobgen binary
// needs no files beside it. Generated code is not written from templates:
// cmd/jobgen builds it with jennifer.
//
// job.go.tmpl is executed with these fields:
//
//	.Package   the package name of the target directory
//	.Name      the job type's name, an exported Go identifier
//	.Queue     the queue for the //job: line, or "" for none
//	.Generate  whether to add a //go:generate line (none in the directory yet)
//
// and can call these functions:
//
//	keys       the //job: keys of a job, comma-separated, from the table jobopt.Keys
//	comment    its text wrapped into // comment lines of at most 76 columns
package templates

import "embed"

// FS holds the *.tmpl files of this directory.
//
//go:embed *.tmpl
var FS embed.FS

// Job is the name in FS of the starter job file's template.
const Job = "job.go.tmpl"
