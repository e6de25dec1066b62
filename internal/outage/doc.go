// Package outage runs a call that settles jobs a worker holds (an ack,
// a release, a failure) again while it fails, as through an outage of
// Redis, for as long as the jobs' leases may last (Retry).
package outage
