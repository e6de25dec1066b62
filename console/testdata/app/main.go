// Command app is a worker binary written as an application writes one,
// for the console package's tests: its handlers, then console.Main.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jobgen/jobgen/console"
	"github.com/jobgen/jobgen/runtime"
)

// slow is a job that takes its time.
type slow struct {
	Name string
	For  time.Duration
}

// secret is an encrypted job: its body is sealed under the key ring.
type secret struct{ Text string }

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
	runtime.Register(r, "test.Secret", func(ctx context.Context, j secret) error {
		fmt.Println("handling secret", j.Text)
		return nil
	})
	// The README's way: the ring the application dispatches with (none
	// while APP_KEYS is unset).
	ring, err := runtime.ParseKeyRing(os.Getenv("APP_KEYS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "app:", err)
		os.Exit(1)
	}
	console.Main(r, console.WithEngine(runtime.EngineConfig{Keys: ring}))
}
