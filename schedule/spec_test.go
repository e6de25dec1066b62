package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// ticks lists the ticks of s in [from, to).
func ticks(s spec, from, to time.Time) []time.Time {
	var out []time.Time
	for t := s.Next(from.Add(-time.Nanosecond)); !t.IsZero() && t.Before(to); t = s.Next(t) {
		out = append(out, t)
	}
	return out
}

func at(loc *time.Location, y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

func TestScheduleParse(t *testing.T) {
	for _, bad := range []string{"", "* * * *", "61 * * * *", "@sometimes", "@every 1.5s", "@every 0s", "0 0 30 2 *", "0 0 1 1 * 2030"} {
		_, err := parseSpec(bad, nil)
		require.ErrorIs(t, err, errSpec, bad)
	}
	for expr, name := range map[string]string{"@every 90s": "@every 90s", "@every 5m0s": "@every 5m", "@every 120m": "@every 2h", "@every 61s": "@every 61s"} {
		s, err := parseSpec(expr, nil)
		require.NoError(t, err)
		require.Equal(t, name, s.String())
	}
	utc := time.UTC
	for _, tc := range []struct {
		expr string
		from time.Time
		want []time.Time
	}{
		{"*/20 * * * * *", at(utc, 2026, 1, 1, 0, 0), []time.Time{at(utc, 2026, 1, 1, 0, 0), at(utc, 2026, 1, 1, 0, 0).Add(20 * time.Second), at(utc, 2026, 1, 1, 0, 0).Add(40 * time.Second)}},
		{"0 9 * * 1-5", at(utc, 2026, 1, 2, 0, 0), []time.Time{at(utc, 2026, 1, 2, 9, 0), at(utc, 2026, 1, 5, 9, 0), at(utc, 2026, 1, 6, 9, 0)}},
		{"@hourly", at(utc, 2026, 1, 1, 0, 30), []time.Time{at(utc, 2026, 1, 1, 1, 0), at(utc, 2026, 1, 1, 2, 0), at(utc, 2026, 1, 1, 3, 0)}},
		{"@every 90s", time.Unix(0, 0).UTC(), []time.Time{time.Unix(0, 0).UTC(), time.Unix(90, 0).UTC(), time.Unix(180, 0).UTC()}},
	} {
		s, err := parseSpec(tc.expr, nil)
		require.NoError(t, err, tc.expr)
		got := ticks(s, tc.from, tc.want[len(tc.want)-1].Add(time.Second))
		require.Equal(t, tc.want, got, tc.expr)
		require.Equal(t, tc.want[1], s.Prev(tc.want[2].Add(-time.Second)), tc.expr)
		require.Equal(t, tc.want[1], s.Prev(tc.want[1]), tc.expr)
	}
}

// TestScheduleDST holds the rule on the days clocks change in two zones:
// a daily at a time that does not exist runs once, at the first valid
// instant after it; one at a time that occurs twice runs once, at its
// first occurrence; nothing else moves.
func TestScheduleDST(t *testing.T) {
	ny, paris := zone(t, "America/New_York"), zone(t, "Europe/Paris")
	utc := func(y int, m time.Month, d, h, min int) time.Time { return at(time.UTC, y, m, d, h, min) }
	for _, tc := range []struct {
		name string
		expr string
		loc  *time.Location
		from time.Time // a day before
		want []time.Time
	}{
		// New York, 8 March 2026: 02:00 EST becomes 03:00 EDT (07:00 UTC).
		{"ny spring 02:30", "30 2 * * *", ny, at(ny, 2026, 3, 7, 0, 0), []time.Time{utc(2026, 3, 7, 7, 30), utc(2026, 3, 8, 7, 0), utc(2026, 3, 9, 6, 30)}},
		{"ny spring 01:30", "30 1 * * *", ny, at(ny, 2026, 3, 7, 0, 0), []time.Time{utc(2026, 3, 7, 6, 30), utc(2026, 3, 8, 6, 30), utc(2026, 3, 9, 5, 30)}},
		{"ny spring 03:00", "0 3 * * *", ny, at(ny, 2026, 3, 7, 0, 0), []time.Time{utc(2026, 3, 7, 8, 0), utc(2026, 3, 8, 7, 0), utc(2026, 3, 9, 7, 0)}},
		// New York, 1 November 2026: 02:00 EDT becomes 01:00 EST (06:00 UTC).
		{"ny fall 01:30", "30 1 * * *", ny, at(ny, 2026, 10, 31, 0, 0), []time.Time{utc(2026, 10, 31, 5, 30), utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)}},
		{"ny fall 02:30", "30 2 * * *", ny, at(ny, 2026, 10, 31, 0, 0), []time.Time{utc(2026, 10, 31, 6, 30), utc(2026, 11, 1, 7, 30), utc(2026, 11, 2, 7, 30)}},
		// Paris, 29 March 2026: 02:00 CET becomes 03:00 CEST (01:00 UTC).
		{"paris spring 02:30", "30 2 * * *", paris, at(paris, 2026, 3, 28, 0, 0), []time.Time{utc(2026, 3, 28, 1, 30), utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 30)}},
		// Paris, 25 October 2026: 03:00 CEST becomes 02:00 CET (01:00 UTC).
		{"paris fall 02:30", "30 2 * * *", paris, at(paris, 2026, 10, 24, 0, 0), []time.Time{utc(2026, 10, 24, 0, 30), utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)}},
		// Every 30 minutes across the skipped hour: 02:00 and 02:30 run
		// once, together, at 03:00, which is a tick of its own.
		{"paris spring */30", "*/30 1-3 * * *", paris, at(paris, 2026, 3, 29, 0, 0), []time.Time{utc(2026, 3, 29, 0, 0), utc(2026, 3, 29, 0, 30), utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 30), utc(2026, 3, 29, 23, 0), utc(2026, 3, 29, 23, 30), utc(2026, 3, 30, 0, 0)}},
		// Every 30 minutes across the repeated hour: 02:00 and 02:30 run
		// at their first occurrence only.
		{"paris fall */30", "*/30 1-3 * * *", paris, at(paris, 2026, 10, 25, 0, 0), []time.Time{utc(2026, 10, 24, 23, 0), utc(2026, 10, 24, 23, 30), utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 2, 0), utc(2026, 10, 25, 2, 30), utc(2026, 10, 26, 0, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSpec(tc.expr, tc.loc)
			require.NoError(t, err)
			got := ticks(s, tc.from, tc.want[len(tc.want)-1].Add(time.Second))
			for i := range got {
				got[i] = got[i].UTC()
			}
			require.Equal(t, tc.want, got)
			// Prev agrees with Next at every instant around each tick,
			// including inside the repeated hour.
			for i, w := range tc.want {
				require.True(t, s.Prev(w).Equal(w), "Prev at tick %v", w)
				if i > 0 {
					require.True(t, s.Prev(w.Add(-time.Second)).Equal(tc.want[i-1]), "Prev before tick %v", w)
				}
			}
		})
	}
	// Inside the repeated hour, after its first occurrence, the last tick
	// of a daily 01:30 is that first occurrence.
	s, err := parseSpec("30 1 * * *", ny)
	require.NoError(t, err)
	require.Equal(t, utc(2026, 11, 1, 5, 30), s.Prev(utc(2026, 11, 1, 6, 45)).UTC())
}
