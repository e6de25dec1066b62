// Package bench measures jobgen beside other Go job queues on Redis
// (asynq, gocraft/work and taskq) in one run, against one Redis, so every
// figure is a ratio taken on the same machine. It is its own module, so
// users of jobgen pull in none of the other queues' code.
//
// # Running
//
// bench/run.sh starts a redis-server of its own and runs cmd/jobbench,
// which calls [Run] and prints a JSON line per system and phase, then a
// table of ratios to the best peer ([WriteJSON], [WriteTable]). See
// docs/benchmarks.md.
//
// # Systems
//
// Each queue is driven through the small [System] interface, by an
// adapter written against the queue's public API ([Systems]). Every job
// carries a sequence number, so each phase reports duplicate and missing
// jobs, and a time, from which pickup latency and lateness are measured.
//
// # Safety
//
// The harness runs in one Redis database, never 0, which it flushes
// before every phase; it refuses a database holding keys it did not write
// ([OpenTarget]).
package bench
