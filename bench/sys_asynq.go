package bench

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
)

var asynqInfo = Info{
	Name:        "asynq",
	BulkMode:    "one Enqueue per job (asynq has no batch API)",
	DelayMode:   "ProcessIn (stored in whole seconds)",
	AtLeastOnce: true,
	Open:        openAsynq,
}

// asynqSystem drives asynq with a Client, and a Server for the workers.
// Tasks go to asynq's "default" queue; payloads are raw bytes.
type asynqSystem struct {
	opt  asynq.RedisConnOpt
	poll time.Duration
	c    *asynq.Client
	srv  *asynq.Server
}

func openAsynq(_ context.Context, o Options) (System, error) {
	opt, err := asynq.ParseRedisURI(o.URL)
	if err != nil {
		return nil, err
	}
	return &asynqSystem{opt: opt, poll: o.PeerPoll, c: asynq.NewClient(opt)}, nil
}

func (s *asynqSystem) task(j Job) *asynq.Task {
	return asynq.NewTask("bench", appendBinary(make([]byte, 0, 16+len(j.Pad)), j))
}

func (s *asynqSystem) Enqueue(ctx context.Context, j Job) error {
	_, err := s.c.EnqueueContext(ctx, s.task(j))
	return err
}

func (s *asynqSystem) EnqueueDelayed(ctx context.Context, j Job, delay time.Duration) error {
	_, err := s.c.EnqueueContext(ctx, s.task(j), asynq.ProcessIn(delay))
	return err
}

func (s *asynqSystem) EnqueueBatch(ctx context.Context, jobs []Job) error {
	for _, j := range jobs {
		if err := s.Enqueue(ctx, j); err != nil {
			return err
		}
	}
	return nil
}

func (s *asynqSystem) Start(concurrency int, h Handler) error {
	cfg := asynq.Config{Concurrency: concurrency, LogLevel: asynq.ErrorLevel}
	if s.poll > 0 {
		cfg.TaskCheckInterval = s.poll
		cfg.DelayedTaskCheckInterval = s.poll
	}
	s.srv = asynq.NewServer(s.opt, cfg)
	return s.srv.Start(asynq.HandlerFunc(func(_ context.Context, t *asynq.Task) error {
		seq, at, err := decodeBinaryHeader(t.Payload())
		if err != nil {
			return err
		}
		h(seq, at)
		return nil
	}))
}

func (s *asynqSystem) Stop() error {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv = nil
	}
	return nil
}

func (s *asynqSystem) Close() error { return s.c.Close() }
