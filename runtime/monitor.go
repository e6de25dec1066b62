package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobgen/jobgen/internal/histcache"
)

// Monitoring: each worker keeps a record of itself in Redis, renewed
// every WorkerConfig.MonitorEvery under a lease, and adds the jobs it
// finished to per-minute counts in the same pipeline. Inspector.Workers and
// Inspector.Metrics read them (for the dashboard). A worker counts in
// memory and writes at most once a period, so monitoring costs a
// pipeline of a few commands per worker every period, whatever the
// number of jobs.

// metricsRetention is how long per-minute counts are kept: a day, and
// the hour the oldest minute of that day falls in.
const metricsRetention = 25 * time.Hour

// WorkerInfo is the record a live worker keeps of itself.
type WorkerInfo struct {
	// ID is unique to this run of the worker.
	ID string `json:"id"`
	// Name is WorkerConfig.Name.
	Name        string    `json:"name"`
	Host        string    `json:"host"`
	PID         int       `json:"pid"`
	Queues      []string  `json:"queues"`
	Concurrency int       `json:"concurrency"`
	StartedAt   time.Time `json:"started_at"`
	// SeenAt is when the worker last wrote this record (its clock).
	SeenAt time.Time `json:"seen_at"`
	// Paused is true while the worker is paused (Worker.Pause).
	Paused bool `json:"paused,omitempty"`
	// Running are the jobs whose handlers run now, oldest first; their
	// number is the worker's busy slots.
	Running []RunningJob `json:"running,omitempty"`
	// Newer are the jobs the worker has given back because their schema
	// version is newer than it knows, by queue, name and version: they
	// wait for a newer worker (newer_monitor.go).
	Newer []NewerJobs `json:"newer,omitempty"`
}

// RunningJob is a job a worker's handler runs now.
type RunningJob struct {
	Queue     string    `json:"queue"`
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Attempt   int       `json:"attempt"`
	StartedAt time.Time `json:"started_at"`
}

// Workers returns the live workers under the engine's prefix, by name
// then ID: those whose last record is younger than its lease. The
// entries of workers that died are deleted on the way.
func (i *Inspector) Workers(ctx context.Context) ([]WorkerInfo, error) {
	e := i.e
	now := time.Now().UnixMilli()
	k := e.keys.Workers()
	// A worker that died left its entry, which goes now; its record
	// expired by itself.
	ids, err := e.store.LiveMembers(ctx, k, now)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = e.keys.Worker(id)
	}
	recs, err := e.store.Values(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("read workers: %w", err)
	}
	out := make([]WorkerInfo, 0, len(ids))
	for _, r := range recs {
		if !r.Found {
			continue
		}
		var info WorkerInfo
		if json.Unmarshal([]byte(r.Value), &info) == nil {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b WorkerInfo) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// MinuteCount is how many jobs of one queue finished in one minute.
type MinuteCount struct {
	// Minute is the start of the minute (workers' clocks).
	Minute    time.Time
	Queue     string
	Processed int64 // succeeded (JobProcessed)
	Failed    int64 // failed for good (JobFailed)
}

// Metrics returns the per-minute counts of every queue from since (at
// most a day ago: older counts are gone) to now, by minute then queue.
// Minutes in which no job of a queue finished are left out.
func (i *Inspector) Metrics(ctx context.Context, since time.Time) ([]MinuteCount, error) {
	e := i.e
	now := time.Now()
	if oldest := now.Add(-metricsRetention); since.Before(oldest) {
		since = oldest
	}
	first, last := since.Unix()/3600, now.Unix()/3600
	keys := make([]string, 0, last-first+1)
	settled := make([]bool, 0, last-first+1)
	for h := first; h <= last; h++ {
		keys = append(keys, e.keys.Metrics(h))
		settled = append(settled, now.After(time.Unix((h+1)*3600, 0).Add(histcache.Settle)))
	}
	// the hours' keys are on many slots of a cluster
	hashes, err := e.history.Read(ctx, e.store, keys, settled, metricsRetention, !e.store.IsCluster())
	if err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	type mk struct {
		minute int64
		queue  string
	}
	counts := map[mk]*MinuteCount{}
	from := since.Unix() / 60
	for _, h := range hashes {
		for field, v := range h {
			parts := strings.SplitN(field, "|", 3)
			if len(parts) != 3 {
				continue
			}
			m, err := strconv.ParseInt(parts[0], 10, 64)
			if err != nil || m < from {
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			key := mk{m, parts[2]}
			mc := counts[key]
			if mc == nil {
				mc = &MinuteCount{Minute: time.Unix(m*60, 0), Queue: parts[2]}
				counts[key] = mc
			}
			switch parts[1] {
			case "processed":
				mc.Processed += n
			case "failed":
				mc.Failed += n
			}
		}
	}
	out := make([]MinuteCount, 0, len(counts))
	for _, mc := range counts {
		out = append(out, *mc)
	}
	slices.SortFunc(out, func(a, b MinuteCount) int {
		if c := a.Minute.Compare(b.Minute); c != 0 {
			return c
		}
		return strings.Compare(a.Queue, b.Queue)
	})
	return out, nil
}

// monitor is what a worker keeps in memory between two writes of its
// record and counts.
type monitor struct {
	mu     sync.Mutex
	counts map[countKey]int64
}

// countKey is one per-minute counter.
type countKey struct {
	minute int64 // unix minutes
	kind   string
	queue  string
}

// observe counts finished jobs, from the worker's events. It takes a
// lock and touches a map: no Redis call. The jobs running now are read
// from the worker's own table of them when the record is written.
func (m *monitor) observe(ev Event) {
	var kind string
	switch ev.Kind {
	case JobProcessed:
		kind = "processed"
	case JobFailed:
		kind = "failed"
	default:
		return
	}
	m.mu.Lock()
	if m.counts == nil {
		m.counts = map[countKey]int64{}
	}
	m.counts[countKey{time.Now().Unix() / 60, kind, ev.Queue}]++
	m.mu.Unlock()
}

// take returns the counts gathered since the last take.
func (m *monitor) take() map[countKey]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	counts := m.counts
	m.counts = nil
	return counts
}

// give puts back counts a write could not deliver.
func (m *monitor) give(counts map[countKey]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = map[countKey]int64{}
	}
	for k, n := range counts {
		m.counts[k] += n
	}
}
