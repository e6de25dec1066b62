// Package exampleevents is a small shop's event and listeners, annotated
// for jobgen, with the generated jobs_gen.go committed beside them. Its
// test fires the event through the generated Fire on a real Redis and an
// embedded one: each queued listener runs as a job of its own, and the
// synchronous one inside Fire.
package exampleevents

//go:generate go run github.com/jobgen/jobgen/cmd/jobgen
