package attempt

import (
	"slices"
	"testing"
	"time"
)

func TestExponential(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 40: 5 * time.Second} {
		if got := Exponential(time.Second, 5*time.Second, n); got != want {
			t.Errorf("Exponential(1s, 5s, %d) = %v, want %v", n, got, want)
		}
	}
}

func TestParseBackoff(t *testing.T) {
	got, err := ParseBackoff("1s,5s,30s")
	if err != nil || !slices.Equal(got, []time.Duration{time.Second, 5 * time.Second, 30 * time.Second}) {
		t.Fatalf("ParseBackoff = %v, %v", got, err)
	}
	for _, bad := range []string{"", "1s,,2s", "-1s", "soon"} {
		if _, err := ParseBackoff(bad); err == nil {
			t.Errorf("ParseBackoff(%q) took it", bad)
		}
	}
}
