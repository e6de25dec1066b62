package flowlimit

import "testing"

func TestShareAddsUpToTheLimit(t *testing.T) {
	for _, c := range []struct{ n, parts int }{{10, 3}, {3, 3}, {7, 1}, {65, 64}} {
		sum := 0
		for i := range c.parts {
			sum += Share(c.n, c.parts, i)
		}
		if sum != c.n {
			t.Errorf("shares of %d over %d add up to %d", c.n, c.parts, sum)
		}
	}
}

func TestLimited(t *testing.T) {
	var nilSet *Limited
	nilSet.Note("q", true)
	if nilSet.Has("q") {
		t.Fatal("a nil set has a limit")
	}
	f := &Limited{}
	f.Note("q", true)
	if !f.Has("q") || f.Has("r") {
		t.Fatal("Has after Note(q, true)")
	}
	f.Note("q", false)
	if f.Has("q") {
		t.Fatal("Has after Note(q, false)")
	}
}
