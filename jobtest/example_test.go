package jobtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jobgen/jobgen/jobtest"
)

// A fake records what the code under test dispatches; the assertions
// take typed predicates.
func ExampleFake() {
	t := &testing.T{} // in a test, the test's own t
	fake := jobtest.NewFake()
	ctx := fake.Context(context.Background())

	_ = signUp(ctx, "ada@example.com", 7)

	ok := jobtest.AssertDispatched(t, fake, func(j sendWelcome) bool { return j.To == "ada@example.com" }) &&
		jobtest.AssertChained(t, fake, resize{UserID: 7}, notify{UserID: 7}) &&
		jobtest.AssertNotDispatched[notify](t, fake)
	fmt.Println("assertions hold:", ok)
	for _, d := range fake.Dispatches() {
		fmt.Printf("%s on %s, then %d chained\n", d.Job.JobName(), d.Queue, len(d.Chain))
	}
	// Output:
	// assertions hold: true
	// test.SendWelcome on emails, then 0 chained
	// test.Resize on media, then 1 chained
}
