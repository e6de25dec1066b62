package attempt

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	now  = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	boom = errors.New("boom")
)

func TestAdmit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		l      Limits
		n      int
		wantIs error
	}{
		{"no limits", Limits{}, 100, nil},
		{"within tries", Limits{Tries: 3}, 3, nil},
		{"past tries", Limits{Tries: 3}, 4, ErrMaxAttempts},
		{"retry-until ahead ignores tries", Limits{Tries: 1, RetryUntil: now.Add(time.Second)}, 9, nil},
		{"retry-until now is not past", Limits{RetryUntil: now}, 1, nil},
		{"retry-until past", Limits{RetryUntil: now.Add(-time.Nanosecond)}, 1, ErrRetryUntil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.l.Admit(tc.n, now)
			if tc.wantIs == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantIs)
		})
	}
}

func TestAfterException(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		l          Limits
		n          int
		counts     bool
		exceptions int
		wantIs     error
		wantAsked  bool
	}{
		{"retry", Limits{Tries: 3}, 2, true, 2, nil, false},
		{"last try", Limits{Tries: 3}, 3, true, 3, ErrMaxAttempts, false},
		{"no limit", Limits{}, 50, true, 50, nil, false},
		{"retry-until ahead ignores tries", Limits{Tries: 1, RetryUntil: now.Add(time.Minute)}, 5, true, 5, nil, false},
		{"retry-until reached", Limits{RetryUntil: now}, 1, true, 1, ErrRetryUntil, false},
		{"tries before exceptions, as Laravel", Limits{Tries: 2, MaxExceptions: 2}, 2, true, 2, ErrMaxAttempts, false},
		{"exceptions reached", Limits{Tries: 10, MaxExceptions: 2}, 3, true, 2, ErrMaxExceptions, true},
		{"exceptions below", Limits{Tries: 10, MaxExceptions: 2}, 3, true, 1, nil, true},
		{"a timeout is no exception", Limits{Tries: 10, MaxExceptions: 1}, 3, false, 9, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			fail, cerr := tc.l.AfterException(tc.n, now, boom, tc.counts, func() (int, error) { asked = true; return tc.exceptions, nil })
			require.NoError(t, cerr)
			require.Equal(t, tc.wantAsked, asked, "whether the exceptions were counted")
			if tc.wantIs == nil {
				require.NoError(t, fail)
				return
			}
			require.ErrorIs(t, fail, tc.wantIs)
			require.ErrorIs(t, fail, boom, "the reason wraps the attempt's error")
		})
	}
}

func TestAfterExceptionCountError(t *testing.T) {
	t.Parallel()
	bad := errors.New("cache down")
	fail, cerr := Limits{MaxExceptions: 1}.AfterException(1, now, boom, true, func() (int, error) { return 0, bad })
	require.NoError(t, fail, "a count that cannot be read releases the job")
	require.ErrorIs(t, cerr, bad)
}

func TestAfterTimeout(t *testing.T) {
	t.Parallel()
	require.ErrorIs(t, Limits{Tries: 5, FailOnTimeout: true}.AfterTimeout(1, now, boom), boom)
	require.NoError(t, Limits{Tries: 5}.AfterTimeout(1, now, boom))
	require.ErrorIs(t, Limits{Tries: 5}.AfterTimeout(5, now, boom), ErrMaxAttempts)
	require.NoError(t, Limits{Tries: 5, MaxExceptions: 1}.AfterTimeout(2, now, boom), "a timeout does not count as an exception")
}

func TestAfterRelease(t *testing.T) {
	t.Parallel()
	require.NoError(t, Limits{Tries: 2}.AfterRelease(1, now))
	require.ErrorIs(t, Limits{Tries: 2}.AfterRelease(2, now), ErrMaxAttempts)
	require.NoError(t, Limits{Tries: 1, RetryUntil: now.Add(time.Second)}.AfterRelease(3, now))
	require.ErrorIs(t, Limits{RetryUntil: now}.AfterRelease(1, now), ErrRetryUntil)
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	d := []time.Duration{time.Second, 5 * time.Second, time.Minute}
	for n, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 5 * time.Second, 3: time.Minute, 9: time.Minute} {
		require.Equal(t, want, Backoff(d, n), "after attempt %d", n)
	}
	require.Zero(t, Backoff(nil, 3))
}

func TestAfterExceptionSaysTheTriesInWords(t *testing.T) {
	t.Parallel()
	fail, err := Limits{Tries: 1}.AfterException(1, now, boom, true, nil)
	require.NoError(t, err)
	require.EqualError(t, fail, "jobgen: job failed on its only try: "+boom.Error())
	require.ErrorIs(t, fail, ErrMaxAttempts)
	require.ErrorIs(t, fail, boom)
	fail, err = Limits{Tries: 3}.AfterException(3, now, boom, true, nil)
	require.NoError(t, err)
	require.EqualError(t, fail, "jobgen: job failed after 3 of 3 tries: "+boom.Error())
}
