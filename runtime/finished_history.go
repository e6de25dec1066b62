package runtime

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ClassSlot is one ten-minute slot of a job class's history.
type ClassSlot struct {
	// Start is when the slot began.
	Start time.Time
	ClassMetrics
	// Wait is the wait of the jobs of the slot whose wait is known: from
	// when each became ready (its dispatch, or the end of the delay it
	// was dispatched with) to when its handler started, for the jobs that
	// succeeded at their first attempt. Wait.Jobs counts them, and
	// Wait.PerMinute is 0.
	Wait ClassMetrics
}

// JobClassHistory is the history of one job class (wire name) of a
// queue: one entry a ten-minute slot, oldest first, the last the
// current slot.
type JobClassHistory struct {
	Name  string
	Slots []ClassSlot
}

// MaxHistorySlots is the most slots JobHistory reads: a day.
const MaxHistorySlots = 144

// JobHistory returns the throughput and runtime percentiles of each job
// class that finished on queue in each of the last slots ten-minute
// slots (1 to MaxHistorySlots), sorted by name, from the runtime
// histograms that the acks of a queue that keeps finished jobs write
// (EngineConfig.KeepFinished). It reads one hash a slot (one a slot and
// partition, for a partitioned queue).
func (i *Inspector) JobHistory(ctx context.Context, queue string, slots int) ([]JobClassHistory, error) {
	h, err := i.QueueHistory(ctx, queue, slots)
	return h.Classes, err
}

// QueueHistory is a queue's history in ten-minute slots
// (Inspector.QueueHistory).
type QueueHistory struct {
	// Classes are each job class's, sorted by name.
	Classes []JobClassHistory
	// All is every class's together (Name ""): the queue's throughput,
	// runtimes and waits.
	All JobClassHistory
}

// QueueHistory is JobHistory, with every class's histograms added up
// into the queue's, for its percentiles of runtime and wait: from the
// same reads.
func (i *Inspector) QueueHistory(ctx context.Context, queue string, slots int) (QueueHistory, error) {
	if err := validateQueueOrPartition(queue); err != nil {
		return QueueHistory{}, err
	}
	slots = min(max(slots, 1), MaxHistorySlots)
	slotMs := runtimesSlot.Milliseconds()
	cur := time.Now().UnixMilli() / slotMs
	first := cur - int64(slots) + 1
	names := i.e.queueNames(queue)
	keys := make([]string, 0, slots*len(names))
	for _, q := range names {
		for s := first; s <= cur; s++ {
			keys = append(keys, i.e.keys.Runtimes(q, s))
		}
	}
	hashes, err := i.e.store.Hashes(ctx, keys)
	if err != nil {
		return QueueHistory{}, fmt.Errorf("job history of %q: %w", queue, err)
	}
	// by class, then slot: the histogram's buckets, of runtimes and of
	// waits
	by, waits := map[string][]map[int]int64{}, map[string][]map[int]int64{}
	all, allWaits := map[string][]map[int]int64{}, map[string][]map[int]int64{}
	add := func(m map[string][]map[int]int64, name string, s, b int, n int64) {
		if m[name] == nil {
			m[name] = make([]map[int]int64, slots)
		}
		if m[name][s] == nil {
			m[name][s] = map[int]int64{}
		}
		m[name][s][b] += n
	}
	for k, h := range hashes {
		s := k % slots
		for field, v := range h {
			var n int64
			if _, err := fmt.Sscan(v, &n); err != nil {
				continue
			}
			if name, b, ok := parseRuntimeField(field); ok {
				add(by, name, s, b, n)
				add(all, "", s, b, n)
			} else if name, b, ok := parseWaitField(field); ok {
				add(waits, name, s, b, n)
				add(allWaits, "", s, b, n)
			}
		}
	}
	minutes := float64(runtimesSlot / time.Minute)
	history := func(name string, perSlot, waited []map[int]int64) JobClassHistory {
		hist := JobClassHistory{Name: name, Slots: make([]ClassSlot, slots)}
		for s := range hist.Slots {
			hist.Slots[s] = ClassSlot{Start: time.UnixMilli((first + int64(s)) * slotMs)}
			if perSlot != nil {
				hist.Slots[s].ClassMetrics = classMetrics(perSlot[s], minutes)
			}
			if waited != nil {
				hist.Slots[s].Wait = classMetrics(waited[s], minutes)
				hist.Slots[s].Wait.PerMinute = 0
			}
		}
		return hist
	}
	out := QueueHistory{Classes: make([]JobClassHistory, 0, len(by)), All: history("", all[""], allWaits[""])}
	for name, perSlot := range by {
		out.Classes = append(out.Classes, history(name, perSlot, waits[name]))
	}
	slices.SortFunc(out.Classes, func(a, b JobClassHistory) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parseWaitField splits a runtimes hash field that counts waits,
// "name|w<bucket>" (waitField).
func parseWaitField(f string) (string, int, bool) {
	k := strings.LastIndexByte(f, '|')
	if k < 0 || !strings.HasPrefix(f[k+1:], "w") {
		return "", 0, false
	}
	b, err := strconv.Atoi(f[k+2:])
	if err != nil {
		return "", 0, false
	}
	return f[:k], b, true
}
