package progress

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCutNote(t *testing.T) {
	long := strings.Repeat("a", MaxNote-1) + "é" // the rune straddles the bound
	if got := CutNote(long); got != strings.Repeat("a", MaxNote-1) {
		t.Fatalf("CutNote cut to %d bytes", len(got))
	}
	if got := CutNote("short"); got != "short" {
		t.Fatalf("CutNote(short) = %q", got)
	}
}

func TestSlotWritesTheFirstAtOnceAndCoalescesTheRest(t *testing.T) {
	var mu sync.Mutex
	var wrote []int
	s := NewSlot(func(_ context.Context, percent int, _ string) error {
		mu.Lock()
		wrote = append(wrote, percent)
		mu.Unlock()
		return nil
	})
	for p := range 5 {
		if err := s.Set(context.Background(), p*10, ""); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	if len(wrote) != 1 || wrote[0] != 0 {
		t.Fatalf("wrote %v at once; want [0]", wrote)
	}
	mu.Unlock()
	deadline := time.Now().Add(3 * Every)
	for {
		mu.Lock()
		n := len(wrote)
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(wrote) != 2 || wrote[1] != 40 {
		t.Fatalf("wrote %v; want [0 40]", wrote)
	}
}
