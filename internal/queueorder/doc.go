// Package queueorder decides the order in which a worker serves its
// queues: a draw by weight (Weighted), and the skipping, for a while, of
// a queue whose keys Redis refuses (Quarantine), so that one broken
// queue does not keep the queues after it from being served.
package queueorder
