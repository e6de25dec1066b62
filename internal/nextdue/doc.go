// Package nextdue holds what a worker's fruitless reserves learned of
// its queues' next events (Next: the earliest delayed job, lease
// deadline and opening of a rate limit, by the Redis clock) and turns it
// into how long an idle worker waits.
package nextdue
