// Package cputime reads the CPU time this process has used, for the
// benchmarks that report CPU per job.
package cputime
