// Package rdb is the Redis side of jobgen's engine: every command and
// script call the engine, its workers and its operators' tools make
// goes through a Store, and no other package of the product calls
// go-redis, beside internal/send (how a script call reaches Redis) and
// the Laravel bridge's own format.
//
// It takes and returns plain values (strings, integers, byte slices,
// the key names of internal/keyspace) and imports nothing from runtime.
// runtime decides (what a retry means, when a group may run, which
// partition a job goes to); rdb stores and reads. A new kind of write
// goes here, as a method of Store in the file of its room.
//
// # Rooms
//
//   - store.go: the Store, script calls, the Redis clock and errors.
//   - enqueue.go: the enqueue step of every way into a queue
//     (lib/enqueue.lua on the script side), the known queues, and the
//     replicated push.
//   - reserve.go: the migrate and the reserve, alone or behind the
//     waiting BLPOP (wait.go).
//   - settle.go, finish.go: the settles of reserved jobs (ack, release,
//     unreserve, start, extend, fail, finish), by ID and token; each
//     returns the jobs it did not find under their tokens (Miss).
//   - failed.go, cancel.go, hooks.go: the failed store, the cancel of a
//     job, and the hooks due after a failure.
//   - nodes.go: what is read of each master of a cluster (eviction
//     policy, memory).
//   - outbox.go: the outbox relay's marks (each queue's relayed set)
//     and the backlog it publishes.
//   - schedule.go: a schedule entry's state and its pause.
//   - connect.go, connect_probe.go: the client of each URL form
//     runtime.Open takes, and the names of what fails when it connects
//     (a Redis that cannot be reached, a rediss:// URL whose server
//     speaks plain Redis).
//
// Every other file is named after the room whose keys it reads and
// writes: inspect.go, finished.go, group_inspect.go, results.go and
// monitor.go for operators' views; doorbell.go, wait.go, settle.go and
// workers.go for the worker; limits.go and batch.go for flow limits and
// batches; progress.go and sizes.go for a job's progress and a queue's
// sizes.
package rdb
