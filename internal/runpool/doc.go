// Package runpool keeps the goroutines a worker runs its jobs on (Pool):
// each job's process and its handler's attempt run on a goroutine that,
// once done, waits for the next piece of work rather than exiting, and
// whose stack was grown once, up front (growStack).
package runpool
