package jobtest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/jobgen/jobgen/runtime"
)

// matching counts the recorded jobs of type T that satisfy every match.
func matching[T runtime.Job](f *Fake, match []func(T) bool) int {
	n := 0
	for _, j := range Jobs[T](f) {
		ok := true
		for _, m := range match {
			if !m(j) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

func typeName[T any]() string { return fmt.Sprintf("%T", *new(T)) }

// AssertDispatched fails t unless a job of type T was dispatched that
// satisfies every match (any job of type T if none is given).
func AssertDispatched[T runtime.Job](t testing.TB, f *Fake, match ...func(T) bool) bool {
	t.Helper()
	if matching(f, match) == 0 {
		t.Errorf("jobtest: no %s was dispatched%s; dispatched: %s", typeName[T](), predicateNote(len(match)), summary(f))
		return false
	}
	return true
}

// AssertDispatchedTimes fails t unless exactly n jobs of type T that
// satisfy every match were dispatched.
func AssertDispatchedTimes[T runtime.Job](t testing.TB, f *Fake, n int, match ...func(T) bool) bool {
	t.Helper()
	if got := matching(f, match); got != n {
		t.Errorf("jobtest: %s was dispatched %d times%s, want %d; dispatched: %s", typeName[T](), got, predicateNote(len(match)), n, summary(f))
		return false
	}
	return true
}

// AssertNotDispatched fails t if a job of type T that satisfies every
// match was dispatched.
func AssertNotDispatched[T runtime.Job](t testing.TB, f *Fake, match ...func(T) bool) bool {
	t.Helper()
	if got := matching(f, match); got != 0 {
		t.Errorf("jobtest: %s was dispatched %d times%s, want none", typeName[T](), got, predicateNote(len(match)))
		return false
	}
	return true
}

// AssertNothingDispatched fails t if anything was dispatched, a batch
// included.
func AssertNothingDispatched(t testing.TB, f *Fake) bool {
	t.Helper()
	if len(f.Dispatches()) > 0 || len(f.Batches()) > 0 {
		t.Errorf("jobtest: want nothing dispatched; dispatched: %s; batches: %d", summary(f), len(f.Batches()))
		return false
	}
	return true
}

// AssertBatched fails t unless a batch was dispatched that satisfies
// every match (any batch if none is given).
func AssertBatched(t testing.TB, f *Fake, match ...func(Batch) bool) bool {
	t.Helper()
	for _, b := range f.Batches() {
		ok := true
		for _, m := range match {
			if !m(b) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	t.Errorf("jobtest: no batch was dispatched%s; batches: %s", predicateNote(len(match)), batchSummary(f))
	return false
}

// AssertBatchCount fails t unless exactly n batches were dispatched.
func AssertBatchCount(t testing.TB, f *Fake, n int) bool {
	t.Helper()
	if got := len(f.Batches()); got != n {
		t.Errorf("jobtest: %d batches were dispatched, want %d; batches: %s", got, n, batchSummary(f))
		return false
	}
	return true
}

// BatchJobs returns the jobs of type T in batch b, the links of its
// chains included.
func BatchJobs[T runtime.Job](b Batch) []T {
	var out []T
	for _, j := range b.Jobs {
		jobs := []runtime.Job{j}
		if c, ok := j.(*runtime.PendingChain); ok {
			jobs = c.Jobs()
		}
		for _, j := range jobs {
			if v, ok := unwrap(j).(T); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func batchSummary(f *Fake) string {
	bs := f.Batches()
	if len(bs) == 0 {
		return "none"
	}
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = fmt.Sprintf("%q (%d jobs)", b.Options.Name, len(b.Jobs))
	}
	return strings.Join(s, ", ")
}

// AssertChained fails t unless some dispatch was of jobs[0] with
// jobs[1:] chained after it, in order. Jobs are compared by wire name
// and encoded fields.
func AssertChained(t testing.TB, f *Fake, jobs ...runtime.Job) bool {
	t.Helper()
	if len(jobs) == 0 {
		t.Errorf("jobtest: AssertChained needs the jobs of the chain")
		return false
	}
	want, err := encodeAll(jobs)
	if err != nil {
		t.Errorf("jobtest: AssertChained: %v", err)
		return false
	}
	for _, d := range f.Dispatches() {
		got, err := encodeAll(append([]runtime.Job{d.Job}, d.Chain...))
		if err == nil && equalJobs(got, want) {
			return true
		}
	}
	t.Errorf("jobtest: no chain %s was dispatched; dispatched: %s", names(jobs), summary(f))
	return false
}

// encodedJob is a job by wire name and encoded fields.
type encodedJob struct {
	name string
	body []byte
}

func encodeAll(jobs []runtime.Job) ([]encodedJob, error) {
	out := make([]encodedJob, len(jobs))
	for i, j := range jobs {
		j = unwrap(j)
		b, err := j.EncodeJob()
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", j.JobName(), err)
		}
		out[i] = encodedJob{name: j.JobName(), body: b}
	}
	return out, nil
}

func equalJobs(a, b []encodedJob) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || !bytes.Equal(a[i].body, b[i].body) {
			return false
		}
	}
	return true
}

func names(jobs []runtime.Job) string {
	s := make([]string, len(jobs))
	for i, j := range jobs {
		s[i] = unwrap(j).JobName()
	}
	return "[" + strings.Join(s, " -> ") + "]"
}

// summary lists the recorded dispatches for failure messages.
func summary(f *Fake) string {
	ds := f.Dispatches()
	if len(ds) == 0 {
		return "nothing"
	}
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%+v", d.Job)
		if len(d.Chain) > 0 {
			s[i] = names(append([]runtime.Job{d.Job}, d.Chain...))
		}
	}
	return strings.Join(s, ", ")
}

func predicateNote(n int) string {
	if n == 0 {
		return ""
	}
	return " matching the predicate"
}
