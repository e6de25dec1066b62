package bench

import (
	"context"
	"io"
	"log"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis/v8"
	"github.com/vmihailenco/taskq/v3"
	"github.com/vmihailenco/taskq/v3/redisq"
)

var taskqInfo = Info{
	Name:        "taskq",
	BulkMode:    "one Add per job (taskq's redisq has no batch API)",
	DelayMode:   "Message.SetDelay (ms)",
	AtLeastOnce: true,
	Open:        openTaskq,
}

func init() {
	// taskq logs to stderr through a package logger; its shutdown and
	// scheduler chatter would bury the harness's output.
	taskq.SetLogger(log.New(io.Discard, "", 0))
}

// taskqSystem drives taskq's Redis Streams backend (redisq): one queue,
// one registered task whose arguments (sequence number, time, filler)
// taskq encodes with msgpack.
type taskqSystem struct {
	rdb     *redis.Client
	factory taskq.Factory
	q       taskq.Queue
	task    *taskq.Task
	h       atomic.Pointer[Handler]
	started bool
}

func openTaskq(ctx context.Context, o Options) (System, error) {
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, err
	}
	s := &taskqSystem{rdb: rdb, factory: redisq.NewFactory()}
	tasks := new(taskq.TaskMap)
	s.task, err = tasks.Register(&taskq.TaskOptions{
		Name: "bench",
		Handler: func(seq, at int64, _ string) error {
			if h := s.h.Load(); h != nil {
				(*h)(seq, at)
			}
			return nil
		},
	})
	if err != nil {
		rdb.Close()
		return nil, err
	}
	qo := &taskq.QueueOptions{Name: "bench", Redis: rdb, Handler: tasks}
	if o.PeerPoll > 0 {
		qo.SchedulerBackoffTime = o.PeerPoll
	}
	s.q = s.factory.RegisterQueue(qo)
	return s, nil
}

func (s *taskqSystem) Enqueue(ctx context.Context, j Job) error {
	return s.q.Add(s.task.WithArgs(ctx, j.Seq, j.At, j.Pad))
}

func (s *taskqSystem) EnqueueDelayed(ctx context.Context, j Job, delay time.Duration) error {
	m := s.task.WithArgs(ctx, j.Seq, j.At, j.Pad)
	m.SetDelay(delay)
	return s.q.Add(m)
}

func (s *taskqSystem) EnqueueBatch(ctx context.Context, jobs []Job) error {
	for _, j := range jobs {
		if err := s.Enqueue(ctx, j); err != nil {
			return err
		}
	}
	return nil
}

// Start runs taskq's consumer with exactly concurrency workers. (With
// only a maximum, taskq tunes its workers and fetchers itself, and on this
// harness drains at under half the rate of a fixed pool: the fixed pool
// is the fairer comparison.)
func (s *taskqSystem) Start(concurrency int, h Handler) error {
	s.h.Store(&h)
	o := s.q.Options()
	o.MinNumWorker, o.MaxNumWorker = int32(concurrency), int32(concurrency)
	if err := s.q.Consumer().Start(context.Background()); err != nil {
		return err
	}
	s.started = true
	return nil
}

func (s *taskqSystem) Stop() error {
	if !s.started {
		return nil
	}
	s.started = false
	err := s.q.Consumer().Stop()
	s.h.Store(nil)
	return err
}

func (s *taskqSystem) Close() error {
	err := s.factory.Close()
	if cerr := s.rdb.Close(); err == nil {
		err = cerr
	}
	return err
}
