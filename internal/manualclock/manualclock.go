// Package manualclock is a clock for tests that moves only when told: a
// schedule run (schedule.Config.Clock) reads it and sleeps on it.
package manualclock

import (
	"context"
	"sync"
	"time"
)

// Clock moves only when told: runs sleeping on it (After) wake when Set
// passes their time.
type Clock struct {
	mu      sync.Mutex
	changed *sync.Cond
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// New returns a clock stopped at now.
func New(now time.Time) *Clock {
	c := &Clock{now: now}
	c.changed = sync.NewCond(&c.mu)
	return c
}

// Now returns the clock's time.
func (c *Clock) Now(context.Context) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now, nil
}

// After returns a channel that receives the time once the clock has
// reached now + d.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	at := c.now.Add(d)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at, ch})
	c.changed.Broadcast()
	return ch
}

// WaitForSleepers blocks until n calls of After are waiting, and returns
// the earliest time one of them waits for.
func (c *Clock) WaitForSleepers(n int) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.waiters) < n {
		c.changed.Wait()
	}
	first := c.waiters[0].at
	for _, w := range c.waiters[1:] {
		if w.at.Before(first) {
			first = w.at
		}
	}
	return first
}

// Set moves the clock to t (forward or back) and wakes the sleepers whose
// time has come.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(t) {
			kept = append(kept, w)
			continue
		}
		w.ch <- t
	}
	c.waiters = kept
}
