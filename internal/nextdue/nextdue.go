package nextdue

import "time"

// Next is what a fruitless reserve learned about the queues.
type Next struct {
	Now    time.Time // Redis clock, at or before the replies were made
	Due    time.Time // earliest delayed job, zero if none
	Expiry time.Time // earliest lease deadline, zero if none
	// Open is when the rate of queue Rated lets more jobs through, if a
	// rate held a reserve back; zero if none did.
	Open  time.Time
	Rated string
}

// Slack is added to a wait for a delayed job, for a Redis clock that
// runs a little fast of the worker's (NTP slewing it, say). Nothing
// else: Now is no later than the Redis clock when the reply was made,
// and the wait starts after it came, so the wait cannot end before the
// job's due time by that clock.
const Slack = 100 * time.Microsecond

// UntilDue is how long to wait for the earliest delayed job to be due.
func (u Next) UntilDue() time.Duration {
	return max(u.Due.Sub(u.Now)+Slack, Slack)
}

// UntilOpen is how long to wait for the rate that held a reserve back
// to let more through.
func (u Next) UntilOpen() time.Duration {
	return max(u.Open.Sub(u.Now)+Slack, Slack)
}

// Wait is how long to wait for jobs: sleep, or less when a delayed job
// falls due, a lease runs out (at least 100ms on) or a rate lets more
// through sooner.
func (u Next) Wait(sleep time.Duration) time.Duration {
	wait := sleep
	if !u.Due.IsZero() {
		wait = min(wait, u.UntilDue())
	}
	if !u.Expiry.IsZero() {
		wait = min(wait, max(u.Expiry.Sub(u.Now)+time.Millisecond, 100*time.Millisecond))
	}
	if !u.Open.IsZero() {
		wait = min(wait, u.UntilOpen())
	}
	return wait
}

// Merge adds u's times to the earliest of next's. Now is left as it is.
func (next *Next) Merge(u Next) {
	next.Due = Earliest(next.Due, u.Due)
	next.Expiry = Earliest(next.Expiry, u.Expiry)
	if !u.Open.IsZero() && (next.Open.IsZero() || u.Open.Before(next.Open)) {
		next.Open, next.Rated = u.Open, u.Rated
	}
}

// Earliest returns the earlier of a and b, a zero time being none.
func Earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
