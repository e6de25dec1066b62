// Package notes carries notes to running workers: an engine's one
// subscription to its notes channel (Hub), the notes' text (a cancel
// of a running job, a restart broadcast), and the box each worker keeps
// of the notes it has not acted on yet (Box).
//
// # What a note is
//
// A cancel of a running job and a restart broadcast are written to
// Redis first, where a worker's poll finds them (the heartbeat, every
// RetryAfter/3; the restart mark's GET). Then a note goes out on the
// prefix's notes channel (pub/sub, a shard channel on a Cluster) and
// tells the workers at once.
//
// A note is only a hint to look now. The worker looks with the calls
// its poll makes: a cancel note has it run the heartbeat's extend of the
// jobs it holds under that queue and ID, which says "cancelled" only if
// the job's state is gone and the failed store holds it, and renews the
// lease of a job under another reservation (a later attempt); a restart
// note has it read the restart mark. So a note lost, repeated, late or
// sent by anyone else changes nothing but how soon the worker acts, and
// the fence of a cancel is the same as the heartbeat's.
//
// # One subscription per engine
//
// A Hub is shared by the engine's running workers: its own connection,
// made when the first worker joins and closed when the last one leaves.
// Nothing is sent on the reserve or the ack. When the subscription is
// made, or made again after it broke, every worker's box gets a note to
// catch up (run a heartbeat at once and read the restart mark): what was
// sent while it was down is found then. The poll stays as the last
// fallback (a note sent to a shard that failed over before passing it
// on).
//
// The package knows notes, not jobs: what a worker does with one is the
// worker's (runtime/worker_notify.go).
package notes
