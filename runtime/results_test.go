package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// resultJob is a job whose handler returns a receipt.
type resultJob struct {
	N    int
	Wait bool   // wait for the test's release before returning
	Fail string // fail for good with this message
	Big  int    // return a receipt with a note this long
	opts runtime.JobOptions
}

func (j resultJob) JobName() string                { return "test.Result" }
func (j resultJob) JobOptions() runtime.JobOptions { return j.opts }
func (j resultJob) EncodeJob() ([]byte, error)     { return runtime.Encode(j) }

type receipt struct {
	N       int
	Doubled int
	Note    string
}

// resultBundle runs results tests on each backend with cfg.
func forEachResultBackend(t *testing.T, cfg runtime.EngineConfig, fn func(t *testing.T, b wbundle, release chan struct{})) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be, cfg)
			wb := wbundle{bundle: b, router: runtime.NewRouter(), log: &eventLog{}}
			wb.ctx = runtime.WithDispatcher(b.ctx, b.engine)
			release := make(chan struct{})
			runtime.RegisterResult(wb.router, "test.Result", func(ctx context.Context, j resultJob) (receipt, error) {
				if j.Wait {
					select {
					case <-release:
					case <-time.After(5 * time.Second):
					case <-ctx.Done():
						return receipt{}, ctx.Err()
					}
				}
				if j.Fail != "" {
					return receipt{}, runtime.FailRequest(errors.New(j.Fail))
				}
				return receipt{N: j.N, Doubled: 2 * j.N, Note: strings.Repeat("x", j.Big)}, nil
			})
			fn(t, wb, release)
		})
	}
}

func await(t *testing.T, b wbundle, id string, timeout time.Duration) (receipt, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	return runtime.Await[receipt](ctx, resultJob{}, id)
}

func TestAwaitReturnsTheHandlersResult(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, _ chan struct{}) {
		b.start(t, runtime.WorkerConfig{Concurrency: 4})
		ids := b.dispatch(t, resultJob{N: 21}, resultJob{N: 5})
		got, err := await(t, b, ids[0], 10*time.Second)
		require.NoError(t, err)
		require.Equal(t, receipt{N: 21, Doubled: 42}, got)
		// Read later, without waiting.
		eventually(t, func() bool {
			_, ok, err := runtime.ReadJobResult[receipt](b.ctx, resultJob{}, ids[1])
			return err == nil && ok
		}, "second job's result")
		got, ok, err := runtime.ReadJobResult[receipt](b.ctx, resultJob{}, ids[1])
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, receipt{N: 5, Doubled: 10}, got)
		// The job itself is gone, as any acked job.
		require.Equal(t, runtime.Sizes{}, sizes(t, b.bundle, "default"))
		// JobProcessed reports the result's size.
		eventually(t, func() bool { return len(b.log.of(runtime.JobProcessed)) == 2 }, "two processed events")
		for _, ev := range b.log.of(runtime.JobProcessed) {
			require.Positive(t, ev.ResultSize)
		}
	})
}

func TestAwaitTimesOutOnASlowJob(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, release chan struct{}) {
		b.start(t, runtime.WorkerConfig{})
		id := b.dispatch(t, resultJob{N: 3, Wait: true})[0]
		_, err := await(t, b, id, 200*time.Millisecond)
		var te *runtime.AwaitTimeoutError
		require.ErrorAs(t, err, &te)
		require.ErrorIs(t, err, runtime.ErrAwaitTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, id, te.ID)
		_, ok, err := runtime.ReadJobResult[receipt](b.ctx, resultJob{}, id)
		require.NoError(t, err)
		require.False(t, ok, "the job is still running: no result yet")
		close(release)
		got, err := await(t, b, id, 10*time.Second)
		require.NoError(t, err)
		require.Equal(t, 6, got.Doubled)
	})
}

func TestAwaitReturnsTheJobsFailure(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, _ chan struct{}) {
		b.start(t, runtime.WorkerConfig{})
		id := b.dispatch(t, resultJob{N: 1, Fail: "card declined"})[0]
		_, err := await(t, b, id, 10*time.Second)
		var fe *runtime.JobFailedError
		require.ErrorAs(t, err, &fe)
		require.ErrorIs(t, err, runtime.ErrJobFailed)
		require.Equal(t, id, fe.ID)
		require.Equal(t, "test.Result", fe.Name)
		require.Contains(t, fe.Message, "card declined")
		_, ok, err := runtime.ReadJobResult[receipt](b.ctx, resultJob{}, id)
		require.False(t, ok)
		require.ErrorAs(t, err, &fe)
	})
}

func TestResultOverTheLimitFailsTheJob(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{MaxResultSize: 100}, func(t *testing.T, b wbundle, _ chan struct{}) {
		b.start(t, runtime.WorkerConfig{Tries: 3})
		id := b.dispatch(t, resultJob{N: 1, Big: 1000})[0]
		_, err := await(t, b, id, 10*time.Second)
		var fe *runtime.JobFailedError
		require.ErrorAs(t, err, &fe)
		require.Regexp(t, `result of 10\d\d bytes is over the limit of 100 bytes`, fe.Message)
		require.Equal(t, 1, fe.Attempts, "a result too large is not retried")
		_, err = b.rdb.Get(b.ctx, b.prefix+":{default}:result:"+id).Result()
		require.Error(t, err, "nothing of the refused result is stored")
		// A result within the limit goes through.
		id = b.dispatch(t, resultJob{N: 2, Big: 10})[0]
		got, err := await(t, b, id, 10*time.Second)
		require.NoError(t, err)
		require.Equal(t, 4, got.Doubled)
	})
}

func TestRecordResultRefusesAResultOverTheLimit(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{MaxResultSize: 50}, func(t *testing.T, b wbundle, _ chan struct{}) {
		errs := make(chan error, 2)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			errs <- runtime.RecordResult(ctx, strings.Repeat("y", 60))
			errs <- runtime.RecordResult(ctx, "small")
			return nil
		})
		b.start(t, runtime.WorkerConfig{Queues: []string{"rec"}})
		id := b.dispatch(t, job(1, runtime.JobOptions{Queue: "rec"}))[0]
		var tl *runtime.ResultTooLargeError
		require.ErrorAs(t, <-errs, &tl)
		require.Equal(t, runtime.ResultTooLargeError{Size: 62, Limit: 50}, *tl)
		require.NoError(t, <-errs)
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		got, err := runtime.AwaitOn[string](ctx, "rec", id)
		require.NoError(t, err)
		require.Equal(t, "small", got)
	})
}

func TestResultExpiresAfterItsRetention(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{ResultRetention: time.Second}, func(t *testing.T, b wbundle, _ chan struct{}) {
		b.start(t, runtime.WorkerConfig{})
		id := b.dispatch(t, resultJob{N: 4})[0]
		_, err := await(t, b, id, 10*time.Second)
		require.NoError(t, err)
		ttl, err := b.rdb.PTTL(b.ctx, b.prefix+":{default}:result:"+id).Result()
		require.NoError(t, err)
		require.True(t, ttl > 0 && ttl <= time.Second, "result key TTL %v", ttl)
		eventually(t, func() bool {
			_, ok, err := runtime.ReadJobResult[receipt](b.ctx, resultJob{}, id)
			return err == nil && !ok
		}, "result expired")
	})
}

func TestStaleFinishWritesNothing(t *testing.T) {
	cfg := runtime.EngineConfig{KeepFinished: map[string]runtime.FinishedConfig{"*": {}}}
	forEachBackend(t, cfg, func(t *testing.T, b bundle) {
		require.NoError(t, b.engine.Push(b.ctx, env("q", "app.Job", "1")))
		j := mustReserve(t, b, "q", 1).Jobs[0]
		rec := &runtime.FinishedJob{Name: "app.Job", Attempts: 1, Runtime: time.Millisecond}
		stale := j.Ref
		stale.Token = "old-token"
		err := runtime.NewBroker(b.engine).Finish(b.ctx, runtime.Finish{Ref: stale, Result: []byte("r"), Record: rec})
		require.ErrorIs(t, err, runtime.ErrLeaseLost)
		n, err := b.rdb.Exists(b.ctx, b.prefix+":{q}:result:"+j.ID, b.prefix+":{q}:done:"+j.ID, b.prefix+":{q}:finished", b.prefix+":{q}:finished:info").Result()
		require.NoError(t, err)
		require.Zero(t, n, "a stale finish writes no result, done list or record")
		require.Equal(t, int64(1), sizes(t, b, "q").Reserved)
		// The current token finishes the job and writes them.
		require.NoError(t, runtime.NewBroker(b.engine).Finish(b.ctx, runtime.Finish{Ref: j.Ref, Result: []byte("r"), Record: rec}))
		got, err := b.rdb.Get(b.ctx, b.prefix+":{q}:result:"+j.ID).Result()
		require.NoError(t, err)
		require.Equal(t, "r", got)
		require.Equal(t, runtime.Sizes{}, sizes(t, b, "q"))
	})
}
