package queueorder

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		queues  []string
		weights map[string]int
		want    string // a part of the fault, "" for none
	}{
		{[]string{"a", "b"}, nil, ""},
		{[]string{"a", "b"}, map[string]int{"a": 1, "b": 3}, ""},
		{[]string{"a", "a"}, nil, `Queues lists "a" twice`},
		{[]string{"a", "b"}, map[string]int{"a": 1}, `Weights["b"] (0)`},
		{[]string{"a"}, map[string]int{"a": 1, "c": 1}, `Weights names "c"`},
		{[]string{"a#1"}, nil, "Queues: "},
	} {
		got := Check(c.queues, c.weights)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Check(%v, %v) = %q, want one with %q", c.queues, c.weights, got, c.want)
		}
	}
}

func TestWeightedKeepsEveryQueue(t *testing.T) {
	got := Weighted([]string{"a", "b", "c"}, map[string]int{"a": 1, "b": 5, "c": 2})
	if len(got) != 3 || strings.Join(got, "") == "" {
		t.Fatalf("Weighted = %v", got)
	}
	seen := map[string]bool{}
	for _, q := range got {
		seen[q] = true
	}
	if len(seen) != 3 {
		t.Fatalf("Weighted = %v: a queue twice", got)
	}
}
