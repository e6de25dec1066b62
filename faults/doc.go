// Package faults is jobgen's fault-injection and property suite: it
// checks that the queue loses no acknowledged job and runs a job twice
// only when it must, while workers are killed, stopped and crash-looped,
// Redis is killed, runs out of memory or loses its scripts, clocks are
// skewed and the network is flaky.
//
// # How it works
//
// Each test starts redis-servers of its own on free ports, and runs
// workers as subprocesses (the test binary re-executed as a worker), so
// that it can signal and kill them. Every handler run is written to the
// worker's append-only ledger, which survives kill -9. At the end the
// queue is drained and a checker compares the dispatches Redis
// acknowledged with the ledgers and with what is left in Redis:
//
//   - lost: an acknowledged dispatch with no completed run and no entry
//     in the failed store;
//   - duplicated: completed runs beyond one per job;
//   - every job ID must be in exactly one place: done, failed, or still
//     queued (none, after a drain).
//
// The package holds no code for users; see docs/faults.md for how to run
// the suite, the short CI mode and the long mode.
package faults
