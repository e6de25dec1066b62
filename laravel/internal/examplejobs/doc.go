// Package examplejobs is a Laravel app's jobs as a Go service declares
// them: annotated for jobgen (//job:laravel=...), with the generated
// jobs_gen.go committed beside them. The bridge's tests dispatch and run
// them through the generated RegisterLaravel and Register alone, as an
// application does, against a real Redis and Laravel's own worker.
package examplejobs

//go:generate go run github.com/jobgen/jobgen/cmd/jobgen
