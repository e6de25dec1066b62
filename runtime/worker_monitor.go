package runtime

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"time"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// monitorLease is how long a worker's record outlives its last write.
func (w *Worker) monitorLease() time.Duration {
	return max(5*w.cfg.MonitorEvery, time.Second)
}

// monitorLoop writes the worker's record and counts every MonitorEvery
// until ctx is done, then writes its last counts and removes its record
// with done, a context that is still live, within a second.
func (w *Worker) monitorLoop(ctx, done context.Context, start time.Time) {
	if w.cfg.MonitorEvery < 0 {
		return
	}
	host, _ := os.Hostname()
	info := WorkerInfo{
		ID: w.wakeID, Name: w.cfg.Name, Host: host, PID: os.Getpid(),
		Queues: w.cfg.Queues, Concurrency: w.cfg.Concurrency, StartedAt: start,
	}
	w.writeMonitor(ctx, &info, false)
	t := time.NewTicker(w.cfg.MonitorEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// Bounded, so that a Redis that is down does not hold up the
			// stop: a record left behind drops out after its lease.
			last, cancel := context.WithTimeout(done, time.Second)
			w.writeMonitor(last, &info, true)
			cancel()
			return
		case <-t.C:
			w.writeMonitor(ctx, &info, false)
		}
	}
}

// writeMonitor sends the worker's record (or, when last, its removal)
// and the counts gathered since the last write, in one pipeline.
func (w *Worker) writeMonitor(ctx context.Context, info *WorkerInfo, last bool) {
	w.mu.Lock()
	running := make([]RunningJob, 0, len(w.active))
	for _, a := range w.active {
		if a.run.ID != "" {
			running = append(running, a.run)
		}
	}
	info.Paused = w.resumeCh != nil
	w.mu.Unlock()
	slices.SortFunc(running, func(a, b RunningJob) int { return a.StartedAt.Compare(b.StartedAt) })
	counts := w.mon.take()
	now := time.Now()
	info.SeenAt, info.Running = now, running
	info.Newer = w.waitingNewer.list() // newer_monitor.go
	rec, err := json.Marshal(info)
	if err != nil {
		return
	}
	lease := w.monitorLease()
	write := jobrdb.MonitorWrite{
		Registry: w.e.keys.Workers(), Record: w.e.keys.Worker(info.ID), ID: info.ID,
		Remove: last, Data: rec, Lease: lease, Until: now.Add(lease).UnixMilli(),
		Expire: map[string]time.Time{},
	}
	for k, n := range counts {
		h := k.minute / 60
		write.Incrs = append(write.Incrs, jobrdb.Incr{Key: w.e.keys.Metrics(h), Field: strconv.FormatInt(k.minute, 10) + "|" + k.kind + "|" + k.queue, N: n})
		write.Expire[w.e.keys.Metrics(h)] = time.Unix(h*3600, 0).Add(metricsRetention)
	}
	err = w.e.store.WriteMonitor(ctx, write)
	if err != nil && ctx.Err() == nil {
		w.give(counts)
		w.log.Debug("writing the worker's record and counts failed; trying again next period", "err", err)
	}
}

// give puts counts back for the next write.
func (w *Worker) give(counts map[countKey]int64) {
	if len(counts) > 0 {
		w.mon.give(counts)
	}
}
