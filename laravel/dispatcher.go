package laravel

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Dispatcher pushes Go jobs onto a Laravel queue as the payloads of their
// PHP classes, for Laravel's workers (or a Go Worker) to run. It is a
// runtime.Dispatcher: set it with runtime.SetConnection("laravel", d)
// for jobs annotated connection=laravel, or runtime.SetDefaultDispatcher.
//
// A unique job (runtime.UniqueJob with UniqueFor) takes its lock in the
// app's cache store as Laravel's dispatch does (unique.go), and a held
// one is refused with a *runtime.DuplicateError.
//
// What Laravel's payload cannot carry is refused with runtime.ErrInvalid
// rather than dropped: chains (WithChain), encrypted jobs of a class not mapped with MapEncrypted under the app's
// key (Mapper.UseEncrypter), and sub-second precision (delays, backoffs,
// timeouts and retry-until are rounded up to whole seconds, as Laravel
// counts them).
type Dispatcher struct {
	q *Queue
	m *Mapper
}

// NewDispatcher returns a dispatcher that pushes the jobs m maps to q.
func NewDispatcher(q *Queue, m *Mapper) (*Dispatcher, error) {
	if err := m.Err(); err != nil {
		return nil, err
	}
	return &Dispatcher{q: q, m: m}, nil
}

// Dispatch pushes p's job and returns its payload's uuid.
func (d *Dispatcher) Dispatch(ctx context.Context, p *runtime.PendingDispatch) (string, error) {
	job := p.Job()
	d.m.mu.RLock()
	mp := d.m.byType[reflect.TypeOf(job)]
	d.m.mu.RUnlock()
	opts := p.JobOptions()
	switch {
	case mp == nil:
		return "", fmt.Errorf("%w: job %s (%T) is mapped to no Laravel class: annotate it //job:laravel=App\\Jobs\\X, or laravel.Map it", runtime.ErrInvalid, job.JobName(), job)
	case len(p.Chain()) > 0:
		return "", fmt.Errorf("%w: job %s: a chain cannot be dispatched to Laravel (its payload chains PHP objects); dispatch the jobs one by one", runtime.ErrInvalid, job.JobName())
	case opts.Debounce > 0 || opts.DebounceMaxWait > 0:
		return "", fmt.Errorf("%w: job %s is debounced: the Laravel dispatcher does not debounce (Laravel's DebounceFor keeps its state in the app's cache, with its own layout); dispatch it through a jobgen engine, or without debounce", runtime.ErrInvalid, job.JobName())
	case grouped(p):
		return "", fmt.Errorf("%w: job %s has a group or a group limit: Laravel's queue has no fair groups, and its workers would ignore them; dispatch it through a jobgen engine, or without a group", runtime.ErrInvalid, job.JobName())
	case opts.Encrypted && !mp.sealed:
		return "", fmt.Errorf("%w: job %s is encrypted, and its class %s is not mapped with laravel.MapEncrypted (Laravel seals ShouldBeEncrypted jobs with the app's APP_KEY: Mapper.UseEncrypter)", runtime.ErrInvalid, job.JobName(), mp.class)
	}
	queue, delay := p.Queue(), p.DelayDuration()
	payload, uuid, err := mp.newPayload(job, opts, queue, delay, time.Now())
	if err != nil {
		return "", err
	}
	undo, err := d.q.lockUnique(ctx, mp.class, job.JobName(), job) // unique.go
	if err != nil {
		return "", err
	}
	if delay > 0 {
		err = d.q.Later(ctx, queue, delay, payload)
	} else {
		err = d.q.Push(ctx, queue, payload)
	}
	if err != nil {
		undo()
		return "", err
	}
	return uuid, nil
}

// grouped reports whether p's job is dispatched in a group or with a
// group limit, which a Laravel payload cannot carry.
func grouped(p *runtime.PendingDispatch) bool {
	g, limit := p.Group()
	return g != "" || limit > 0
}
