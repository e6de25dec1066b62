package runtime_test

import (
	"strings"
	"testing"

	"github.com/jobgen/jobgen/runtime"
)

// manyJob is the bench/ harness's job, as jobgen generates it.
type manyJob struct {
	Seq int64
	At  int64
	Pad string
}

func (manyJob) JobName() string                { return "bench.Job" }
func (manyJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: benchQueue} }
func (j manyJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

const manyJobs = 100_000

func manyBatch() []manyJob {
	jobs := make([]manyJob, manyJobs)
	pad := strings.Repeat("p", 32)
	for i := range jobs {
		jobs[i] = manyJob{Seq: int64(i), At: 1, Pad: pad}
	}
	return jobs
}

// BenchmarkBulk100k pushes 100,000 jobs of one type per op, two ways
// from the same typed jobs: building envelopes and calling
// Engine.PushMany (what a caller of PushMany does), and
// runtime.DispatchMany. Both include encoding; jobs/s counts every job.
func BenchmarkBulk100k(b *testing.B) {
	b.Run("PushMany", func(b *testing.B) {
		ctx, e := benchEngine(b)
		jobs := manyBatch()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			out := make([]runtime.Outgoing, len(jobs))
			for i, j := range jobs {
				env, err := runtime.NewPendingDispatch(j).Envelope()
				if err != nil {
					b.Fatal(err)
				}
				out[i] = runtime.Outgoing{Envelope: env}
			}
			if err := e.PushMany(ctx, out); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if _, err := runtime.NewInspector(e).ClearQueue(ctx, benchQueue); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.StopTimer()
		reportJobsPerSecond(b, b.N*manyJobs)
	})
	b.Run("DispatchMany", func(b *testing.B) {
		ctx, e := benchEngine(b)
		ctx = runtime.WithDispatcher(ctx, e)
		jobs := manyBatch()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := runtime.DispatchMany(ctx, jobs); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if _, err := runtime.NewInspector(e).ClearQueue(ctx, benchQueue); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.StopTimer()
		reportJobsPerSecond(b, b.N*manyJobs)
	})
}
