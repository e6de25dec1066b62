// Package examplejobs is a small application's jobs, annotated for
// jobgen, with the generated jobs_gen.go committed beside them. Its test
// is jobgen's end-to-end test: it dispatches the jobs (at once, delayed,
// chained, to another queue, conditionally and synchronously) and runs
// a worker that processes them on a real Redis and an embedded one.
//
// Handlers record what they did in the Log carried by their context, so
// the test can see it.
package examplejobs

//go:generate go run github.com/jobgen/jobgen/cmd/jobgen
