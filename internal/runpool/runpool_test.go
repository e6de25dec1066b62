package runpool

import (
	"sync"
	"testing"
)

func TestPoolRunsAllAndKeepsAtMostMax(t *testing.T) {
	p := New(2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := 0
	for range 10 {
		wg.Add(1)
		p.Do(func() {
			defer wg.Done()
			mu.Lock()
			ran++
			mu.Unlock()
		})
	}
	wg.Wait()
	if ran != 10 {
		t.Fatalf("ran %d of 10", ran)
	}
	p.mu.Lock()
	idle := len(p.idle)
	p.mu.Unlock()
	if idle > 2 {
		t.Fatalf("%d goroutines kept waiting; want at most 2", idle)
	}
	p.Close()
	done := make(chan struct{})
	p.Do(func() { close(done) }) // after Close: runs on a goroutine that then ends
	<-done
}
