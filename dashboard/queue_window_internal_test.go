package dashboard

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// The overview's window counts partitions: a queue of more than fit is
// read over two windows, each saying which of its partitions it read,
// and the links step by partitions.
func TestOverviewWindowCountsPartitions(t *testing.T) {
	t.Parallel()
	parts := map[string][]string{"b": {"b", "b#1", "b#2"}}
	partsOf := func(q string) []string {
		if p, ok := parts[q]; ok {
			return p
		}
		return []string{q}
	}
	queues := []string{"a", "b", "c"}
	type want struct {
		read       []queueParts
		win        queueWindow
		labels     []string
		prev, next string
	}
	for from, w := range map[string]want{
		"": {read: []queueParts{{Queue: "a", Parts: []string{"a"}, First: 1, Of: 1}, {Queue: "b", Parts: []string{"b"}, First: 1, Of: 3}},
			win:    queueWindow{From: 1, To: 2, Of: 3, Next: "?from=2", Split: "b: partition 1 of 3"},
			labels: []string{"", "partition 1 of 3"}},
		"3": {read: []queueParts{{Queue: "b", Parts: []string{"b#1", "b#2"}, First: 2, Of: 3}},
			win:    queueWindow{From: 2, To: 2, Of: 3, Prev: "?", Next: "?from=4", Split: "b: partitions 2–3 of 3"},
			labels: []string{"partitions 2–3 of 3"}},
		"99": {read: []queueParts{{Queue: "c", Parts: []string{"c"}, First: 1, Of: 1}},
			win:    queueWindow{From: 3, To: 3, Of: 3, Prev: "?from=2"},
			labels: []string{""}},
	} {
		r := httptest.NewRequest("GET", "/?from="+from, nil)
		read, win := partitionWindow(r, queues, partsOf, 2)
		require.Equal(t, w.read, read, "from=%s", from)
		require.Equal(t, w.win, win, "from=%s", from)
		require.True(t, win.Partial())
		for i, q := range read {
			require.Equal(t, w.labels[i], q.Label())
		}
	}

	// Without partitions, the windows are those of windowOf.
	r := httptest.NewRequest("GET", "/?from=2", nil)
	read, win := partitionWindow(r, queues, func(q string) []string { return []string{q} }, 2)
	names, plain := windowOf(r, queues, 2)
	require.Equal(t, plain, win)
	require.Len(t, read, len(names))
	for i := range names {
		require.Equal(t, names[i], read[i].Queue)
	}
}
