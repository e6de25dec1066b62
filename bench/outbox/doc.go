// Package outboxbench measures jobgen's transactional outbox beside River
// (github.com/riverqueue/river), a job queue that keeps its jobs in
// PostgreSQL, against one PostgreSQL, in one run, so that every figure is
// a ratio taken on the same machine and the same minute.
//
// It is a module of its own, so that nobody who imports jobgen pulls in
// pgx or River.
//
// # Phases
//
//   - insert: jobs written per second inside transactions by Producers
//     goroutines, one job per transaction (River's InsertTx, jobgen's
//     DispatchTx) and Many per transaction (InsertManyTx,
//     DispatchManyTx), with nothing consuming.
//   - latency: the time from just before a transaction's Commit to the
//     start of its job's handler, at Rate jobs a second, one per
//     transaction, with idle consumers: River's started client; jobgen's
//     relay, woken by LISTEN, and a worker.
//   - drain: Backlog jobs inserted in transactions of Many, then the
//     consumers started, and the time until the last handler started.
//     For jobgen that includes the relay's moving the rows to Redis; the
//     relay alone, then the worker alone, are timed too.
//
// # Running
//
// bench/outbox/run.sh starts a PostgreSQL and a Redis of its own, runs
// cmd/outboxbench, which calls [Run] and prints a table ([WriteTable]),
// and stops them. See docs/benchmarks.md.
//
// # Isolation
//
// A run works in a schema of its own, which it drops at the end, and
// under a Redis key prefix of its own, whose keys it deletes: it may
// share a server with other tests.
package outboxbench
