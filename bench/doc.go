// Package bench holds benchmarks of jobgen beside other Go job queues. It
// is its own module, so users of jobgen pull in none of their code.
package bench
