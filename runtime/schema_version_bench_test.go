package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// mailBench is a job of a typical shape: a few strings and a number.
type mailBench struct {
	To, Subject, Template string
	UserID                int64
}

// BenchmarkRouterRun times what a worker does with a job's body between
// its envelope's decode and its handler: the schema version check and
// the strict decode of the body into the job's struct. It has no
// Redis, so it shows their cost where BenchmarkWorkerDrain's round
// trips would hide it. One op is one job.
func BenchmarkRouterRun(b *testing.B) {
	r := runtime.NewRouter()
	runtime.Register(r, "bench.Mail", func(context.Context, mailBench) error { return nil })
	body, err := runtime.Encode(mailBench{To: "someone@example.com", Subject: "Welcome", Template: "welcome", UserID: 42})
	require.NoError(b, err)
	env := &runtime.Envelope{ID: runtime.NewID(), Name: "bench.Mail", Body: body}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Run(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
}
