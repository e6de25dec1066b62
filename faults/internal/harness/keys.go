package harness

// QueueKeys are the Redis keys of one queue, as internal/keyspace/keyspace.go names
// them. The runtime keeps its key names unexported; the checker reads a
// few keys directly, so this mirrors them, and the Dispatcher fails a
// test when the two drift apart.
//
// Per-job bookkeeping is either one State hash (ID ->
// "attempts:exceptions:token") or, in the older layout, three hashes
// (Attempts, Exceptions, Tokens); Audit reads whichever exist.
type QueueKeys struct {
	Ready, Delayed, Reserved, Payloads, State string
	Attempts, Exceptions, Tokens              string
	Notify, Paused, Failed, FailedPayloads    string
	FailedInfo                                string
	// Hooks holds the failing jobs whose hooks may not have run yet.
	Hooks string
	// Relayed holds the marks of the jobs an outbox relay pushed: for a
	// job's row, its job ID.
	Relayed string
}

// Keys returns the keys of queue under prefix.
func Keys(prefix, queue string) QueueKeys {
	p := prefix + ":{" + queue + "}:"
	return QueueKeys{
		Ready: p + "ready", Delayed: p + "delayed", Reserved: p + "reserved", Payloads: p + "payloads", State: p + "state",
		Attempts: p + "attempts", Exceptions: p + "exceptions", Tokens: p + "tokens",
		Notify: p + "notify", Paused: p + "paused", Failed: p + "failed",
		FailedPayloads: p + "failed:payloads", FailedInfo: p + "failed:info",
		Hooks: p + "hooks", Relayed: p + "relayed",
	}
}
