package runtime_test

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// memFailed is a runtime.FailedBackend in memory, for tests of what the
// engine does in Redis around a move (the key audit); package failedsql
// is the real one, tested on PostgreSQL.
type memFailed struct {
	mu   sync.Mutex
	jobs []runtime.FailedJob
}

func (m *memFailed) String() string { return "memory" }

func (m *memFailed) Save(_ context.Context, jobs []runtime.FailedJob) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range jobs {
		if !slices.ContainsFunc(m.jobs, func(h runtime.FailedJob) bool {
			return h.Queue == j.Queue && h.ID == j.ID && h.FailedAt.Equal(j.FailedAt)
		}) {
			m.jobs = append(m.jobs, j)
		}
	}
	return nil
}

func (m *memFailed) of(queue string) []runtime.FailedJob {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []runtime.FailedJob
	for _, j := range m.jobs {
		if j.Queue == queue {
			out = append(out, j)
		}
	}
	return out
}

func (m *memFailed) Count(_ context.Context, queue string) (int64, error) {
	return int64(len(m.of(queue))), nil
}

func (m *memFailed) List(_ context.Context, queue string, offset, limit int) ([]runtime.FailedJob, error) {
	js := m.of(queue)
	slices.Reverse(js)
	if offset >= len(js) {
		return nil, nil
	}
	return js[offset:min(len(js), offset+limit)], nil
}

func (m *memFailed) Get(_ context.Context, queue, id string) (runtime.FailedJob, bool, error) {
	js := m.of(queue)
	for i := len(js) - 1; i >= 0; i-- {
		if js[i].ID == id {
			return js[i], true, nil
		}
	}
	return runtime.FailedJob{}, false, nil
}

func (m *memFailed) UpTo(_ context.Context, queue string, upTo time.Time, offset, limit int) ([]string, error) {
	var ids []string
	for _, j := range m.of(queue) {
		if !j.FailedAt.After(upTo) {
			ids = append(ids, j.ID)
		}
	}
	if offset >= len(ids) {
		return nil, nil
	}
	return ids[offset:min(len(ids), offset+limit)], nil
}

func (m *memFailed) drop(keep func(runtime.FailedJob) bool) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.jobs)
	m.jobs = slices.DeleteFunc(m.jobs, func(j runtime.FailedJob) bool { return !keep(j) })
	return int64(n - len(m.jobs))
}

func (m *memFailed) Forget(_ context.Context, queue string, ids []string) (int64, error) {
	return m.drop(func(j runtime.FailedJob) bool { return j.Queue != queue || !slices.Contains(ids, j.ID) }), nil
}

func (m *memFailed) Flush(_ context.Context, queue string) error {
	m.drop(func(j runtime.FailedJob) bool { return j.Queue != queue })
	return nil
}

func (m *memFailed) Prune(_ context.Context, queue string, age time.Duration) (int64, error) {
	cut := time.Now().Add(-age)
	return m.drop(func(j runtime.FailedJob) bool { return j.Queue != queue || j.FailedAt.After(cut) }), nil
}

func (m *memFailed) Retry(ctx context.Context, queue string, ids []string, r runtime.FailedRetry) ([]string, error) {
	var js []runtime.FailedJob
	for _, j := range m.of(queue) {
		if slices.Contains(ids, j.ID) {
			js = append(js, j)
		}
	}
	pushed, err := r.Push(ctx, js)
	var out []string
	for i, ok := range pushed {
		if ok {
			out = append(out, js[i].ID)
		}
	}
	m.drop(func(j runtime.FailedJob) bool { return j.Queue != queue || !slices.Contains(out, j.ID) })
	return out, err
}
