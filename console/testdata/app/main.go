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
	// The README's way: the ring the application dispatches with.
	var cfg runtime.EngineConfig
	if keys := os.Getenv("APP_KEYS"); keys != "" {
		ring, err := runtime.ParseKeyRing(keys)
		if err != nil {
			fmt.Fprintln(os.Stderr, "app:", err)
			os.Exit(1)
		}
		cfg.Keys = ring
	}
	console.Main(r, console.WithEngine(cfg))
}
