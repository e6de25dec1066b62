// Command app is a worker binary written as an application writes one,
// for the console package's tests: its handlers, then console.Main.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/runtime"
)

// slow is a job that takes its time.
type slow struct {
	Name string
	For  time.Duration
}

func main() {
	r := runtime.NewRouter()
	runtime.Register(r, "test.Slow", func(ctx context.Context, j slow) error {
		fmt.Println("handling", j.Name)
		select {
		case <-time.After(j.For):
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	console.Main(r)
}
