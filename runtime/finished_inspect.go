package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/jobgen/jobgen/internal/histcache"
)

// FinishedQuery picks entries of a queue's record of finished jobs
// (Inspector.FinishedJobs).
type FinishedQuery struct {
	// ID, if set, picks the job with this ID, and nothing else.
	ID string
	// Tag, if set, keeps the jobs carrying this tag (JobOptions.Tags).
	Tag string
	// Offset and Limit page through the entries that match, newest
	// first. Limit 0 means 50.
	Offset, Limit int
}

// finishedScan is how many entries FinishedJobs decodes per round trip
// when it filters by tag.
const finishedScan = 500

// FinishedJobs returns the entries of queue's record of finished jobs
// (EngineConfig.KeepFinished) that q picks, newest first, and how many
// entries the record holds in all. A search by tag reads the record, a
// page of 500 entries a round trip, until it has the page asked for: the
// record is bounded (FinishedConfig.MaxJobs), so a search is too. A queue
// that keeps no record has none.
func (i *Inspector) FinishedJobs(ctx context.Context, queue string, q FinishedQuery) ([]FinishedJob, int64, error) {
	if err := validateQueueOrPartition(queue); err != nil {
		return nil, 0, err
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	if q.Offset < 0 {
		return nil, 0, fmt.Errorf("%w: FinishedQuery.Offset (%d) must not be negative", ErrInvalid, q.Offset)
	}
	var out []FinishedJob
	var total int64
	for _, name := range i.e.queueNames(queue) {
		jobs, n, err := i.finishedOf(ctx, name, q)
		if err != nil {
			return nil, 0, fmt.Errorf("finished jobs of %q: %w", name, err)
		}
		out, total = append(out, jobs...), total+n
	}
	if len(i.e.queueNames(queue)) > 1 { // partitions: merge, newest first
		slices.SortFunc(out, func(a, b FinishedJob) int { return b.FinishedAt.Compare(a.FinishedAt) })
		out = out[min(q.Offset, len(out)):]
		out = out[:min(q.Limit, len(out))]
	}
	return out, total, nil
}

// finishedOf is FinishedJobs on one physical queue. With partitions the
// caller pages over the merged entries, so each gives its first
// Offset+Limit.
func (i *Inspector) finishedOf(ctx context.Context, queue string, q FinishedQuery) ([]FinishedJob, int64, error) {
	z := i.e.keys.Finished(queue)
	from, err := i.finishedFrom(ctx, queue)
	if err != nil {
		return nil, 0, err
	}
	// The records past MaxAge have the lowest scores: the first total
	// ranks, newest first, are the ones listed.
	total, err := i.e.store.CountFrom(ctx, z, from)
	if err != nil {
		return nil, 0, err
	}
	if q.ID != "" {
		jobs, err := i.loadFinished(ctx, queue, []string{q.ID}, nil)
		if len(jobs) == 1 && jobs[0].FinishedAt.UnixMilli() < from {
			jobs = nil
		}
		return jobs, total, err
	}
	offset, want := q.Offset, q.Limit
	if len(i.e.queueNames(i.e.logicalQueue(queue))) > 1 {
		offset, want = 0, q.Offset+q.Limit
	}
	var out []FinishedJob
	skipped := 0
	for start := int64(0); start < total && len(out) < want; start += finishedScan {
		stop := start + finishedScan - 1
		if q.Tag == "" {
			start, stop = int64(offset), int64(offset+want-1)
		}
		stop = min(stop, total-1)
		if stop < start {
			return out, total, nil
		}
		ids, at, err := i.e.store.NewestPage(ctx, z, start, stop)
		if err != nil {
			return nil, 0, err
		}
		jobs, err := i.loadFinished(ctx, queue, ids, at)
		if err != nil {
			return nil, 0, err
		}
		if q.Tag == "" {
			return jobs, total, nil
		}
		for _, j := range jobs {
			if !slices.Contains(j.Tags, q.Tag) {
				continue
			}
			if skipped < offset {
				skipped++
				continue
			}
			if len(out) < want {
				out = append(out, j)
			}
		}
	}
	return out, total, nil
}

// finishedFrom is the finish time (unix ms, by Redis's clock) of the
// oldest record of queue's finished jobs that is listed: those older
// than its MaxAge, which the ack that trims them has not come to yet,
// are left out. 0 lists them all.
func (i *Inspector) finishedFrom(ctx context.Context, queue string) (int64, error) {
	keep, ok := i.e.keepFinished(queue)
	if !ok || keep.MaxAge <= 0 {
		return 0, nil
	}
	now, err := i.e.store.Time(ctx)
	if err != nil {
		return 0, fmt.Errorf("read Redis's clock: %w", err)
	}
	return now.UnixMilli() - keep.MaxAge.Milliseconds(), nil
}

// loadFinished reads the records of the entries ids of queue's finished
// jobs, finished at the scores at (unix ms); nil at reads the scores too.
// An entry whose record is gone (trimmed meanwhile) is left out.
func (i *Inspector) loadFinished(ctx context.Context, queue string, ids []string, at []float64) ([]FinishedJob, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	z, info := i.e.keys.Finished(queue), i.e.keys.FinishedInfo(queue)
	raw, scores, err := i.e.store.FinishedRecords(ctx, info, z, ids, at == nil)
	if err != nil {
		return nil, err
	}
	if at == nil {
		at = scores
	}
	var out []FinishedJob
	for k, v := range raw {
		if !v.Found {
			continue
		}
		fi, errs, err := decodeFinished(v.Value)
		if err != nil {
			return nil, fmt.Errorf("record of finished job %s: %w", ids[k], err)
		}
		out = append(out, FinishedJob{ID: ids[k], Queue: queue, Name: fi.Name, Attempts: fi.Attempts, Worker: fi.Worker,
			StartedAt: time.UnixMilli(fi.StartedAt), Runtime: time.Duration(fi.Runtime) * time.Microsecond,
			ResultSize: fi.ResultSize, Tags: fi.Tags, FinishedAt: time.UnixMilli(int64(at[k])), Wait: -1,
			AttemptErrors: parseAttemptErrors(errs)})
	}
	return out, nil
}

// decodeFinished reads a record of the finished info hash: the encoded
// finishedInfo, then, for a job whose earlier attempts left errors, the
// byte 30 and those errors as the errors hash holds them (finish.lua).
func decodeFinished(v string) (finishedInfo, string, error) {
	var fi finishedInfo
	r := strings.NewReader(v)
	if err := msgpack.NewDecoder(r).Decode(&fi); err != nil {
		return fi, "", err
	}
	rest := v[len(v)-r.Len():]
	if rest == "" {
		return fi, "", nil
	}
	if rest[0] != 0x1e {
		return fi, "", fmt.Errorf("%d bytes after the record, not errors", len(rest))
	}
	return fi, rest[1:], nil
}

// ClassMetrics are the runtimes and throughput of one job class over one
// window, from the queue's runtime histogram (finish.go): a percentile is
// read as the middle of its bucket, within about 10% of the true one.
type ClassMetrics struct {
	Jobs      int64         // jobs finished in the window
	PerMinute float64       // Jobs over the window's minutes
	P50, P95  time.Duration // runtime percentiles
}

// JobClassMetrics are the metrics of one job class (wire name) of a
// queue: over the last hour and the last day.
type JobClassMetrics struct {
	Name      string
	Hour, Day ClassMetrics
}

// JobMetrics returns the runtime percentiles and throughput of each job
// class that finished on queue over the last hour and day, sorted by
// name, from the runtime histograms the acks of a queue that keeps
// finished jobs write (EngineConfig.KeepFinished): ten-minute slots, so
// "the last hour" is the current slot and the five before it (50 to 60
// minutes), and "the last day" the current slot and the 143 before it.
func (i *Inspector) JobMetrics(ctx context.Context, queue string) ([]JobClassMetrics, error) {
	if err := validateQueueOrPartition(queue); err != nil {
		return nil, err
	}
	return i.jobMetrics(ctx, queue, i.e.queueNames(queue))
}

// JobMetricsOfPartitions is JobMetrics of some partitions of queue
// together (QueuePartitions' names), their histograms added up before
// the percentiles are taken, so that a tool may read a queue of many
// partitions a few at a time. Names that are not queue's partitions
// are an ErrInvalid.
func (i *Inspector) JobMetricsOfPartitions(ctx context.Context, queue string, partitions []string) ([]JobClassMetrics, error) {
	if err := validateQueueOrPartition(queue); err != nil {
		return nil, err
	}
	all := i.e.queueNames(queue)
	for _, p := range partitions {
		if !slices.Contains(all, p) {
			return nil, fmt.Errorf("%w: %q is not a partition of %q", ErrInvalid, p, queue)
		}
	}
	return i.jobMetrics(ctx, queue, partitions)
}

func (i *Inspector) jobMetrics(ctx context.Context, queue string, names []string) ([]JobClassMetrics, error) {
	now := time.Now()
	slotMs := runtimesSlot.Milliseconds()
	cur := now.UnixMilli() / slotMs
	const daySlots, hourSlots = 144, 6
	var hashes []map[string]string
	for _, q := range names {
		keys := make([]string, 0, daySlots)
		settled := make([]bool, 0, daySlots)
		for s := cur - daySlots + 1; s <= cur; s++ {
			keys = append(keys, i.e.keys.Runtimes(q, s))
			settled = append(settled, now.After(time.UnixMilli((s+1)*slotMs).Add(histcache.Settle)))
		}
		hs, err := i.e.history.Read(ctx, i.e.store, keys, settled, runtimesTTL, true)
		if err != nil {
			return nil, fmt.Errorf("job metrics of %q: %w", queue, err)
		}
		hashes = append(hashes, hs...)
	}
	hour := map[string]map[int]int64{}
	day := map[string]map[int]int64{}
	for k, h := range hashes {
		recent := k%daySlots >= daySlots-hourSlots
		for field, v := range h {
			name, b, ok := parseRuntimeField(field)
			if !ok {
				continue
			}
			var n int64
			if _, err := fmt.Sscan(v, &n); err != nil {
				continue
			}
			addBucket(day, name, b, n)
			if recent {
				addBucket(hour, name, b, n)
			}
		}
	}
	began := func(slots int64) float64 {
		return float64(now.UnixMilli()-(cur-slots+1)*slotMs) / float64(time.Minute.Milliseconds())
	}
	out := make([]JobClassMetrics, 0, len(day))
	for name, buckets := range day {
		out = append(out, JobClassMetrics{Name: name, Hour: classMetrics(hour[name], began(hourSlots)), Day: classMetrics(buckets, began(daySlots))})
	}
	slices.SortFunc(out, func(a, b JobClassMetrics) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func addBucket(m map[string]map[int]int64, name string, b int, n int64) {
	if m[name] == nil {
		m[name] = map[int]int64{}
	}
	m[name][b] += n
}

// parseRuntimeField splits a runtimes hash field, "name|bucket".
func parseRuntimeField(f string) (string, int, bool) {
	k := strings.LastIndexByte(f, '|')
	if k < 0 {
		return "", 0, false
	}
	var b int
	if _, err := fmt.Sscan(f[k+1:], &b); err != nil {
		return "", 0, false
	}
	return f[:k], b, true
}

// classMetrics reads the counts of a histogram over minutes.
func classMetrics(buckets map[int]int64, minutes float64) ClassMetrics {
	var m ClassMetrics
	keys := make([]int, 0, len(buckets))
	for b, n := range buckets {
		keys = append(keys, b)
		m.Jobs += n
	}
	if m.Jobs == 0 {
		return m
	}
	slices.Sort(keys)
	m.PerMinute = float64(m.Jobs) / max(minutes, 1)
	m.P50, m.P95 = percentile(keys, buckets, m.Jobs, 0.50), percentile(keys, buckets, m.Jobs, 0.95)
	return m
}

// percentile is the runtime under which a fraction p of the jobs ran.
func percentile(keys []int, buckets map[int]int64, total int64, p float64) time.Duration {
	rank := int64(float64(total)*p + 0.999999) // the ceil of p·total
	var seen int64
	for _, b := range keys {
		seen += buckets[b]
		if seen >= max(rank, 1) {
			return bucketMid(b)
		}
	}
	return bucketMid(keys[len(keys)-1])
}
