// Package flowlimit holds an engine's side of the queues' flow limits:
// which queues its reserves found under a concurrency limit (Limited),
// so that a settle of their jobs rings their doorbells, and how a limit
// is shared among a queue's partitions (Share).
package flowlimit
