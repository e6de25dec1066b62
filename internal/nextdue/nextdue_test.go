package nextdue

import (
	"testing"
	"time"
)

func TestUntilDueWaitsNoLongerThanTheDueTime(t *testing.T) {
	t0 := time.UnixMilli(1_800_000_000_000)
	for _, c := range []struct {
		now, due time.Time
		want     time.Duration
	}{
		// A clock read to the µs: the wait ends at the due time, plus the
		// slack, not at the next whole ms after it.
		{t0.Add(300 * time.Microsecond), t0.Add(2 * time.Millisecond), 1700*time.Microsecond + Slack},
		{t0, t0.Add(50 * time.Millisecond), 50*time.Millisecond + Slack},
		// Due already (a migrate ran just before the job fell due): wait
		// only the slack before migrating again.
		{t0.Add(2 * time.Millisecond), t0.Add(time.Millisecond), Slack},
	} {
		if got := (Next{Now: c.now, Due: c.due}).UntilDue(); got != c.want {
			t.Errorf("due %v after now: UntilDue = %v, want %v", c.due.Sub(c.now), got, c.want)
		}
	}
}
