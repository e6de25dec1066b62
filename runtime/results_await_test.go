package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// An empty ID is bad input: Await says so at once, even with no
// deadline. (The deadline here only keeps the test from hanging on a
// build that waits; the assertion is the error.)
func TestAwaitAnEmptyIDIsInvalid(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, _ chan struct{}) {
		_, err := await(t, b, "", 20*time.Second)
		require.ErrorIs(t, err, runtime.ErrInvalid)
		require.Contains(t, err.Error(), `await a job on queue "default": empty job ID: pass the ID that dispatching the job returned`)
		_, _, err = runtime.ReadJobResult[receipt](b.ctx, resultJob{}, "")
		require.ErrorIs(t, err, runtime.ErrInvalid)
	})
}

// An ID the queue does not hold, with no result and no failure, gets an
// *UnknownJobError at once, not a wait to the deadline; a job still
// waiting is waited for, and one dispatched just before is found.
func TestAwaitAnUnknownIDAnswersAtOnce(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, _ chan struct{}) {
		_, err := await(t, b, "01M8HJ5HYTCVFMKSEM1GMMMR0Z", 20*time.Second)
		var ue *runtime.UnknownJobError
		require.ErrorAs(t, err, &ue)
		require.ErrorIs(t, err, runtime.ErrNoJob)
		require.Equal(t, runtime.UnknownJobError{Queue: "default", ID: "01M8HJ5HYTCVFMKSEM1GMMMR0Z"}, *ue)
		require.Contains(t, err.Error(), "the queue holds no such job, and it has no result and no failure: check the ID and the queue")

		// Waiting, with no worker: waited for, to the deadline.
		id := b.dispatch(t, resultJob{N: 2})[0]
		_, err = await(t, b, id, 100*time.Millisecond)
		require.ErrorIs(t, err, runtime.ErrAwaitTimeout)

		// A job whose type records no result leaves nothing once done.
		done := make(chan struct{}, 1)
		runtime.Register(b.router, "test.Job", func(ctx context.Context, j testJob) error {
			done <- struct{}{}
			return nil
		})
		b.start(t, runtime.WorkerConfig{})
		got, err := await(t, b, id, 20*time.Second)
		require.NoError(t, err, "Await right after Dispatch finds the job")
		require.Equal(t, 4, got.Doubled)
		plain := b.dispatch(t, testJob{})[0]
		<-done
		eventually(t, func() bool { return sizes(t, b.bundle, "default") == runtime.Sizes{} }, "the plain job acked")
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		_, err = runtime.AwaitOn[string](ctx, "default", plain)
		require.ErrorAs(t, err, &ue)
	})
}

// A job that failed because its result was too large matches
// ErrResultTooLarge through Await's error, and errors.As finds the
// sizes.
func TestAwaitResultTooLargeMatchesErrResultTooLarge(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{MaxResultSize: 100}, func(t *testing.T, b wbundle, _ chan struct{}) {
		b.start(t, runtime.WorkerConfig{})
		id := b.dispatch(t, resultJob{N: 1, Big: 1000})[0]
		_, err := await(t, b, id, 20*time.Second)
		require.ErrorIs(t, err, runtime.ErrJobFailed)
		require.ErrorIs(t, err, runtime.ErrResultTooLarge)
		var tl *runtime.ResultTooLargeError
		require.ErrorAs(t, err, &tl)
		require.Equal(t, 100, tl.Limit)
		require.Greater(t, tl.Size, 1000)
		_, _, err = runtime.ReadJobResult[receipt](b.ctx, resultJob{}, id)
		require.ErrorIs(t, err, runtime.ErrResultTooLarge)

		// Another failure matches neither.
		id = b.dispatch(t, resultJob{N: 1, Fail: "card declined"})[0]
		_, err = await(t, b, id, 20*time.Second)
		require.ErrorIs(t, err, runtime.ErrJobFailed)
		require.NotErrorIs(t, err, runtime.ErrResultTooLarge)
		require.False(t, errors.As(err, &tl))
	})
}

// A plain cancel of Await's context ends it at once, while its BLPOP
// still waits: Await's steps here are an hour long, and the BLPOP it
// left behind is still there to take an element pushed after Await
// returned. (Await that waited for its BLPOP to end would leave
// nothing to take it.)
func TestAwaitReturnsOnCancelWithoutWaitingOutItsStep(t *testing.T) {
	forEachResultBackend(t, runtime.EngineConfig{}, func(t *testing.T, b wbundle, _ chan struct{}) {
		runtime.SetAwaitStep(b.engine, time.Hour)
		id := b.dispatch(t, resultJob{N: 1})[0] // no worker: it waits
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		defer cancel()
		errs := make(chan error, 1)
		go func() {
			_, err := runtime.Await[receipt](ctx, resultJob{}, id)
			errs <- err
		}()
		done := b.prefix + ":{default}:done:" + id
		cancel()
		err := <-errs
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, runtime.ErrAwaitTimeout)
		require.NoError(t, b.rdb.RPush(b.ctx, done, "x").Err())
		eventually(t, func() bool { return b.rdb.LLen(b.ctx, done).Val() == 0 }, "the BLPOP Await left behind took the element")
	})
}
