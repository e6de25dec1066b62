package partition

import "testing"

func TestSets(t *testing.T) {
	var c Sets
	if c.Of("emails", 1) != nil {
		t.Fatal("a queue of one partition has a set")
	}
	s := c.Of("emails", 3)
	if c.Of("emails", 3) != s {
		t.Fatal("Of made the set twice")
	}
	names := s.Names()
	for i := range 6 {
		if got := s.For(""); got != names[i%3] {
			t.Fatalf("turn %d: For(\"\") = %q, want %q", i, got, names[i%3])
		}
	}
	if s.For("id-1") != s.For("id-1") {
		t.Fatal("For by a key picked two partitions")
	}
	if got := c.Logical(names[2]); got != "emails" {
		t.Fatalf("Logical(%q) = %q, want emails", names[2], got)
	}
	if got := c.Logical("other#2"); got != "other#2" {
		t.Fatalf("Logical of an unknown partition = %q", got)
	}
	if a, b := s.NextStart(), s.NextStart(); b != a+1 {
		t.Fatalf("NextStart went %d, %d", a, b)
	}
}
