package coalesce

import (
	"context"
	"testing"
)

func TestTakeStopsAtMaxAndAtClose(t *testing.T) {
	in := make(chan int, 10)
	for i := range 5 {
		in <- i
	}
	got, open := Take(in, nil, 3)
	if len(got) != 3 || !open {
		t.Fatalf("Take = %v, %v; want 3 items, open", got, open)
	}
	close(in)
	got, open = Take(in, got[:0], 10)
	if len(got) != 2 || open {
		t.Fatalf("Take = %v, %v; want the 2 left, closed", got, open)
	}
}

func TestLoopFlushesAtStopAndHandFlushesAfter(t *testing.T) {
	in := make(chan int, 10)
	stop, done := make(chan struct{}), make(chan struct{})
	var flushed []int
	flush := func(_ context.Context, b []int) { flushed = append(flushed, b...) }
	for i := range 4 {
		in <- i
	}
	close(stop)
	Loop(context.Background(), in, stop, done, 2, flush)
	<-done
	Hand(context.Background(), make(chan int), done, 9, flush)
	if len(flushed) != 5 || flushed[4] != 9 {
		t.Fatalf("flushed %v; want 0..3 then 9", flushed)
	}
}
