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
//   - enqueue.go: the one push of new jobs into a queue (lib/enqueue.lua
//     on the script side), which every way into a queue builds.
//   - store.go: the Store, script calls, errors and the cluster's nodes.
//   - reserve.go: the migrate and the reserve, alone or behind the
//     waiting BLPOP (wait.go).
//   - settle.go, finish.go: the settles of reserved jobs (ack, release,
//     unreserve, start, extend, fail, finish), by ID and token; each
//     returns the jobs it did not find under their tokens (Miss).
//   - failed.go, cancel.go, hooks.go: the failed store, the cancel of a
//     job, and the hooks due after a failure.
//   - outbox.go: the outbox relay's marks (each queue's relayed set),
//     the Redis clock it reads and the backlog it publishes.
//
// Other files are named after the feature whose keys they read and
// write.
package rdb
