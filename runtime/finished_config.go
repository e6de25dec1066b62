package runtime

import (
	"fmt"
	"time"
)

// FinishedConfig bounds the record of finished jobs a queue keeps
// (EngineConfig.KeepFinished). The record is a sorted set and a hash in
// the queue's slot, trimmed by the ack that adds to it: no sweeper runs.
type FinishedConfig struct {
	// MaxJobs is the most finished jobs kept; the oldest go first.
	// Default 10,000.
	MaxJobs int
	// MaxAge is how long a finished job is kept. Default 24 hours.
	MaxAge time.Duration
}

func (f *FinishedConfig) setDefaults() {
	if f.MaxJobs == 0 {
		f.MaxJobs = 10_000
	}
	if f.MaxAge == 0 {
		f.MaxAge = 24 * time.Hour
	}
}

// validateResults checks the settings of results and finished jobs.
func (c *EngineConfig) validateResults() error {
	switch {
	case c.ResultRetention < time.Second:
		return fmt.Errorf("%w: EngineConfig.ResultRetention (%v) must be at least 1s", ErrInvalid, c.ResultRetention)
	case c.MaxResultSize < 1 || c.MaxResultSize > 64<<20:
		return fmt.Errorf("%w: EngineConfig.MaxResultSize (%d) must be between 1 and 67108864 bytes", ErrInvalid, c.MaxResultSize)
	}
	for q, f := range c.KeepFinished {
		if q != "*" {
			if err := validateQueueOrPartition(q); err != nil {
				return fmt.Errorf("EngineConfig.KeepFinished: %w", err)
			}
		}
		switch {
		case f.MaxJobs < 1 || f.MaxJobs > 1_000_000:
			return fmt.Errorf("%w: EngineConfig.KeepFinished[%q].MaxJobs (%d) must be between 1 and 1000000", ErrInvalid, q, f.MaxJobs)
		case f.MaxAge < time.Second:
			return fmt.Errorf("%w: EngineConfig.KeepFinished[%q].MaxAge (%v) must be at least 1s", ErrInvalid, q, f.MaxAge)
		}
	}
	return nil
}

// keepFinished returns the bounds of the finished jobs queue keeps, and
// whether it keeps any. A partition of a queue keeps what its queue does.
func (e *Engine) keepFinished(queue string) (FinishedConfig, bool) {
	if len(e.cfg.KeepFinished) == 0 {
		return FinishedConfig{}, false
	}
	if f, ok := e.cfg.KeepFinished[queue]; ok {
		return f, true
	}
	if f, ok := e.cfg.KeepFinished[e.logicalQueue(queue)]; ok {
		return f, true
	}
	f, ok := e.cfg.KeepFinished["*"]
	return f, ok
}
