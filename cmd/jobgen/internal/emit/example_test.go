package emit_test

import (
	"fmt"
	"time"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/emit"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// The JobOptions literal of `//job:queue=emails tries=5 backoff=10s,1m timeout=30s`.
func ExampleOptions() {
	fmt.Printf("%#v\n", emit.Options(model.Options{
		Queue:   "emails",
		Tries:   5,
		Backoff: []time.Duration{10 * time.Second, time.Minute},
		Timeout: 30 * time.Second,
	}))
	// Output:
	// runtime.JobOptions{
	// 	Queue:   "emails",
	// 	Tries:   5,
	// 	Backoff: []time.Duration{10 * time.Second, time.Minute},
	// 	Timeout: 30 * time.Second,
	// }
}

// A job with its own Handle method and a failed hook is registered like
// this inside the generated Register function.
func ExampleRegisterCall() {
	fmt.Printf("%#v\n", emit.RegisterCall(model.Job{
		TypeName:     "SendEmail",
		Name:         "emails.SendEmail",
		HandleMethod: true,
		FailedMethod: true,
	}))
	// Output:
	// runtime.Register[SendEmail](r, "emails.SendEmail", runtime.HandleMethod[SendEmail], runtime.OnFailed(func(ctx context.Context, job SendEmail, err error) {
	// 	job.Failed(ctx, err)
	// }))
}

func ExampleDuration() {
	for _, d := range []time.Duration{90 * time.Second, time.Hour, 1500 * time.Millisecond} {
		fmt.Printf("%#v\n", emit.Duration(d))
	}
	// Output:
	// 90 * time.Second
	// time.Hour
	// 1500 * time.Millisecond
}
