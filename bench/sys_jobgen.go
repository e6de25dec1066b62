package bench

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// jobgenQueue is the queue of every jobgen benchmark job.
const jobgenQueue = "bench"

// jobgenJob is the benchmark job as jobgen's generator would emit it for
// a //job:queue=bench struct: EncodeJob is runtime.Encode (msgpack).
type jobgenJob struct {
	Seq int64
	At  int64
	Pad string
}

func (jobgenJob) JobName() string                { return "bench.Job" }
func (jobgenJob) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: jobgenQueue} }
func (j jobgenJob) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

var jobgenInfo = Info{
	Name:      "jobgen",
	BulkMode:  "batch API: runtime.DispatchMany (Engine.PushMany's path)",
	DelayMode: "PendingDispatch.Delay (ms)",
	Open:      openJobgen,
}

// jobgenSystem drives jobgen through its public API: runtime.Dispatch
// with the engine as the context's dispatcher, PendingDispatch.Delay,
// runtime.DispatchMany, and a runtime.Worker.
type jobgenSystem struct {
	e    *runtime.Engine
	stop context.CancelFunc
	done chan error
}

func openJobgen(ctx context.Context, o Options) (System, error) {
	cfg := runtime.EngineConfig{Prefix: "jobbench"}
	if o.JobgenLimit.Concurrency > 0 || o.JobgenLimit.Rate > 0 {
		cfg.QueueLimits = map[string]runtime.QueueLimit{jobgenQueue: o.JobgenLimit}
	}
	e, err := runtime.Open(ctx, o.URL, cfg)
	if err != nil {
		return nil, err
	}
	return &jobgenSystem{e: e}, nil
}

func (s *jobgenSystem) Enqueue(ctx context.Context, j Job) error {
	_, err := runtime.Dispatch(runtime.WithDispatcher(ctx, s.e), jobgenJob(j))
	return err
}

func (s *jobgenSystem) EnqueueDelayed(ctx context.Context, j Job, delay time.Duration) error {
	_, err := runtime.NewPendingDispatch(jobgenJob(j)).Delay(delay).Dispatch(runtime.WithDispatcher(ctx, s.e))
	return err
}

func (s *jobgenSystem) EnqueueBatch(ctx context.Context, jobs []Job) error {
	typed := make([]jobgenJob, len(jobs))
	for i, j := range jobs {
		typed[i] = jobgenJob(j)
	}
	_, err := runtime.DispatchMany(runtime.WithDispatcher(ctx, s.e), typed)
	return err
}

func (s *jobgenSystem) Start(concurrency int, h Handler) error {
	r := runtime.NewRouter()
	runtime.Register(r, "bench.Job", func(_ context.Context, j jobgenJob) error {
		h(j.Seq, j.At)
		return nil
	})
	w, err := runtime.NewWorker(s.e, r, runtime.WorkerConfig{
		Name:        "jobbench",
		Queues:      []string{jobgenQueue},
		Concurrency: concurrency,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan error, 1)
	go func() { s.done <- w.Run(ctx) }()
	return nil
}

func (s *jobgenSystem) Stop() error {
	if s.stop == nil {
		return nil
	}
	s.stop()
	err := <-s.done
	s.stop = nil
	return err
}

func (s *jobgenSystem) Close() error { return s.e.Close() }
