package dashboard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An address that guesses whenever it is let gets a few dozen guesses a
// day, not one every few seconds; the right password, or a quiet day,
// clears its count.
func TestWrongPasswordsBackOff(t *testing.T) {
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	g := &guesses{byClient: map[string]*guessState{}, now: func() time.Time { return now }}
	start := now
	guessesIn := func(span time.Duration) int {
		n := 0
		for end := now.Add(span); now.Before(end); {
			if wait := g.lockedFor("a"); wait > 0 {
				now = now.Add(wait)
				continue
			}
			g.wrong("a")
			n++
			now = now.Add(100 * time.Millisecond)
		}
		return n
	}
	first := guessesIn(130 * time.Second)
	require.LessOrEqual(t, first, 13, "guesses in the first 130 s")
	day := first + guessesIn(24*time.Hour-130*time.Second)
	require.LessOrEqual(t, day, 45, "guesses in a day from %v", start)
	require.Equal(t, maxLockout, g.byClient["a"].lock, "the lockout grew to the longest")

	require.LessOrEqual(t, g.lockedFor("b"), time.Duration(0), "another address is not locked out")
	g.forget("a")
	require.LessOrEqual(t, g.lockedFor("a"), time.Duration(0), "the right password clears the count")

	for range freeGuesses + 3 {
		g.wrong("c")
		now = now.Add(g.lockedFor("c"))
	}
	now = now.Add(24*time.Hour + time.Minute)
	g.wrong("c")
	require.LessOrEqual(t, g.lockedFor("c"), time.Duration(0), "a quiet day clears the count")
}
