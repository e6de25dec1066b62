package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gocraft/work"
	"github.com/gomodule/redigo/redis"
)

var gocraftInfo = Info{
	Name:        "gocraft/work",
	BulkMode:    "one Enqueue per job (gocraft/work has no batch API)",
	DelayMode:   "EnqueueIn (whole seconds, rounded up)",
	AtLeastOnce: true,
	Open:        openGocraft,
}

// gocraftNamespace is the Redis namespace of gocraft/work's keys.
const gocraftNamespace = "jobbench"

// gocraftSystem drives gocraft/work with an Enqueuer and a WorkerPool on
// one redigo pool. Job arguments are JSON: the sequence number as a
// number, the time as a decimal string (a float64 would round it).
type gocraftSystem struct {
	pool *redis.Pool
	enq  *work.Enqueuer
	wp   *work.WorkerPool
}

// gocraftContext is the worker pool's (empty) context type.
type gocraftContext struct{}

func openGocraft(_ context.Context, o Options) (System, error) {
	url := o.URL
	pool := &redis.Pool{
		MaxIdle:     max(o.Pool, 1),
		IdleTimeout: time.Minute,
		Wait:        true,
		Dial:        func() (redis.Conn, error) { return redis.DialURL(url) },
	}
	c := pool.Get()
	_, err := c.Do("PING")
	c.Close()
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &gocraftSystem{pool: pool, enq: work.NewEnqueuer(gocraftNamespace, pool)}, nil
}

func gocraftArgs(j Job) work.Q {
	return work.Q{"seq": j.Seq, "at": strconv.FormatInt(j.At, 10), "pad": j.Pad}
}

func (s *gocraftSystem) Enqueue(_ context.Context, j Job) error {
	_, err := s.enq.Enqueue("bench", gocraftArgs(j))
	return err
}

func (s *gocraftSystem) EnqueueDelayed(_ context.Context, j Job, delay time.Duration) error {
	secs := int64((delay + time.Second - 1) / time.Second)
	_, err := s.enq.EnqueueIn("bench", secs, gocraftArgs(j))
	return err
}

func (s *gocraftSystem) EnqueueBatch(ctx context.Context, jobs []Job) error {
	for _, j := range jobs {
		if err := s.Enqueue(ctx, j); err != nil {
			return err
		}
	}
	return nil
}

func (s *gocraftSystem) Start(concurrency int, h Handler) error {
	s.wp = work.NewWorkerPool(gocraftContext{}, uint(concurrency), gocraftNamespace, s.pool)
	s.wp.Job("bench", func(job *work.Job) error {
		seq := job.ArgInt64("seq")
		at, err := strconv.ParseInt(job.ArgString("at"), 10, 64)
		if err := job.ArgError(); err != nil {
			return err
		}
		if err != nil {
			return fmt.Errorf("bench: job time: %w", err)
		}
		h(seq, at)
		return nil
	})
	s.wp.Start()
	return nil
}

func (s *gocraftSystem) Stop() error {
	if s.wp != nil {
		s.wp.Stop()
		s.wp = nil
	}
	return nil
}

func (s *gocraftSystem) Close() error { return s.pool.Close() }
