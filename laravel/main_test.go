package laravel_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// childEnv, set, makes the test binary a Go worker of the conformance
// scenarios instead (see startChildWorker), so that a test can kill it.
const childEnv = "JOBGEN_LARAVEL_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChildWorker())
	}
	redistest.Main(m)
}

// runChildWorker runs a worker of the scenario jobs on the connection
// JOBGEN_LARAVEL_CHILD names, queue JOBGEN_LARAVEL_QUEUE, until it is
// killed; its failed store is under JOBGEN_LARAVEL_STORE (URL) and
// JOBGEN_LARAVEL_STORE_PREFIX, and it reports to JOBGEN_LARAVEL_RESULTS.
func runChildWorker() int {
	ctx := context.Background()
	q, closeQ, err := laravel.Open(ctx, os.Getenv(childEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	defer closeQ()
	engine, err := runtime.Open(ctx, os.Getenv("JOBGEN_LARAVEL_STORE"), runtime.EngineConfig{Prefix: os.Getenv("JOBGEN_LARAVEL_STORE_PREFIX")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	defer engine.Close()
	m := laravel.NewMapper()
	laravel.Map[Scenario](m, `App\Jobs\Scenario`, Scenario{}.JobName())
	w, err := laravel.NewWorker(q, m, scenarioRouter(q.Client(), os.Getenv("JOBGEN_LARAVEL_RESULTS")), laravel.WorkerConfig{
		Queues: []string{os.Getenv("JOBGEN_LARAVEL_QUEUE")}, Sleep: 100 * time.Millisecond, Failed: runtime.NewInspector(engine).Failed(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}
