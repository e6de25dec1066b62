package laravel

import (
	"encoding/json"
	"errors"
	"fmt"
)

// What makes a job PHP's to run: the kinds of phpOnlyError.
const (
	// kindUnmapped: no Go type is mapped to the job's class.
	kindUnmapped = "unmapped class"
	// kindCatch: the job is a link of a chain with catch callbacks.
	kindCatch = "chain with catch callbacks"
	// kindChain: the job's chain has a link the Go worker cannot
	// continue (its class unmapped, another connection).
	kindChain = "chain Go cannot continue"
	// kindBatch: the job belongs to a batch.
	kindBatch = "batch"
)

// phpOnlyError says why a job is for Laravel's worker and not a Go
// worker's: a Go worker leaves such a job on its queue, untouched, for
// PHP's workers, or with WorkerConfig.FailUnmapped fails it with this
// error. It matches ErrUnmappable.
type phpOnlyError struct {
	kind  string
	class string
	msg   string
}

func phpOnly(kind, class, format string, args ...any) error {
	return &phpOnlyError{kind: kind, class: class, msg: fmt.Sprintf(format, args...)}
}

func (e *phpOnlyError) Error() string {
	return fmt.Sprintf("%v: %s %s", ErrUnmappable, e.class, e.msg)
}

func (e *phpOnlyError) Unwrap() error { return ErrUnmappable }

// head is what the worker reads of a job before it reserves it.
type head struct {
	// class is the PHP class, or "Class@method" of a string job; "" if
	// the payload names none: it is not a job.
	class string
	// data is the payload's data, raw.
	data json.RawMessage
}

// readHead reads a payload's class and data in one pass. A payload that
// does not decode, or names no class, has class "".
func readHead(job []byte) head {
	var p struct {
		Job  string          `json:"job"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(job, &p); err != nil {
		return head{}
	}
	h := head{class: p.Job, data: p.Data}
	if p.Job == CallQueuedHandler {
		// A queued object's data.commandName; data of another shape
		// names no class.
		var d struct {
			CommandName string `json:"commandName"`
		}
		_ = json.Unmarshal(p.Data, &d)
		h.class = d.CommandName
	}
	return h
}

// phpOnly says why job, as it lies first on a queue, is for Laravel's
// worker and not this process's (a *phpOnlyError), or nil if a Go
// worker takes it: its class is mapped, and the worker can finish it
// (Mapper.chainOf). A payload that is not a job is taken, for the worker
// to fail it: no PHP worker can run it either. So is a job whose command
// Go cannot read (sealed without the key, or not PHP's serialize()),
// which the worker fails saying so, as before it runs any job.
func (m *Mapper) phpOnly(job []byte) error {
	h := readHead(job)
	if h.class == "" {
		return nil
	}
	m.mu.RLock()
	mp := m.byClass[h.class]
	m.mu.RUnlock()
	if mp == nil {
		if notAJob(job) != "" {
			return nil // named a class, but no job: no PHP worker can pop it
		}
		return phpOnly(kindUnmapped, h.class, "is a class no Go type is mapped to")
	}
	if mp.str {
		return nil
	}
	cmd, ok, err := m.command(Payload{Job: CallQueuedHandler, Data: h.data})
	if !ok || err != nil {
		return nil
	}
	_, err = m.chainOf(cmd.Command, cmd.BatchID)
	var po *phpOnlyError
	if errors.As(err, &po) {
		return po
	}
	return nil
}
