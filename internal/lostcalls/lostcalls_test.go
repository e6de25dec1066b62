package lostcalls

import (
	"errors"
	"testing"
	"time"
)

func TestRecoverKeepsWhatFailsAgainWithinTheWindow(t *testing.T) {
	var l List[int]
	if l.Pending() {
		t.Fatal("an empty list is pending")
	}
	for i := range Max + 2 {
		l.Add(i)
	}
	var seen []int
	fail := true
	got := l.Recover(time.Minute, func(c int) (int, error) {
		seen = append(seen, c)
		if fail && c == 2 {
			return 0, errors.New("down")
		}
		return 1, nil
	})
	if len(seen) != Max || seen[0] != 2 || got != Max-1 {
		t.Fatalf("Recover saw %d calls from %d, got %d; want %d from 2, %d", len(seen), seen[0], got, Max, Max-1)
	}
	if !l.Pending() {
		t.Fatal("the call that failed again was dropped")
	}
	if got := l.Recover(0, func(int) (int, error) { return 1, nil }); got != 0 || l.Pending() {
		t.Fatalf("past the window: Recover = %d, pending %v", got, l.Pending())
	}
}
