package schedule

import "time"

// naive returns t's wall clock in loc as a time in UTC, so that cron
// fields can be matched against it without a zone getting in the way.
func naive(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// instant maps a wall clock time w (a naive time, see naive) in loc to
// the instant it runs at:
//
//   - a wall time that occurs once is that instant;
//   - one that occurs twice (clocks went back) is its first occurrence;
//   - one that does not occur (clocks went forward) is the first valid
//     instant after it: the moment the clocks jumped.
//
// instant is monotonic: w1 < w2 gives instant(w1) <= instant(w2).
func instant(w time.Time, loc *time.Location) time.Time {
	if loc == time.UTC {
		return w
	}
	// The offsets in force a day either side cover every transition a
	// zone has ever made within a day of w.
	wu := w.Unix()
	var best time.Time
	for _, probe := range [...]int64{wu - 86400, wu, wu + 86400} {
		_, off := time.Unix(probe, 0).In(loc).Zone()
		cand := time.Unix(wu-int64(off), int64(w.Nanosecond())).In(loc)
		if _, o := cand.Zone(); o != off {
			continue // that offset is not in force at cand
		}
		if best.IsZero() || cand.Before(best) {
			best = cand
		}
	}
	if !best.IsZero() {
		return best
	}
	// A gap: at w read with the offset before it, the later offset is in
	// force already; the gap ends where the zone period of that instant
	// starts.
	_, off := time.Unix(wu-86400, 0).In(loc).Zone()
	in := time.Unix(wu-int64(off), 0).In(loc)
	start, _ := in.ZoneBounds()
	return start
}
