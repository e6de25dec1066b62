package laravel_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// FlakyReport is App\Jobs\FlakyReport of testdata/versions/jobs.php.
type FlakyReport struct {
	ReportID int `php:"reportId"`
}

func (FlakyReport) JobName() string                { return "test.FlakyReport" }
func (FlakyReport) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j FlakyReport) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// LegacyReport is the string job App\Jobs\LegacyReport@handle.
type LegacyReport struct {
	ReportID int `json:"reportId"`
}

func (LegacyReport) JobName() string                { return "test.LegacyReport" }
func (LegacyReport) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j LegacyReport) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// DebouncedSync is App\Jobs\DebouncedSync, debounced in Laravel 13.
type DebouncedSync struct {
	AccountID int `php:"accountId"`
}

func (DebouncedSync) JobName() string                { return "test.DebouncedSync" }
func (DebouncedSync) JobOptions() runtime.JobOptions { return runtime.JobOptions{} }
func (j DebouncedSync) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

// laravelVersions are the versions of testdata/versions, with their
// major version for laravel.Config.Laravel.
var laravelVersions = []struct {
	dir   string
	major int
}{{"8.83", 8}, {"10.x", 10}, {"11.x", 11}, {"12.x", 12}, {"13.x", 13}}

func fixture(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "versions", dir, name+".json"))
	require.NoError(t, err)
	return bytes.TrimSuffix(b, []byte("\n"))
}

func versionsMapper(t *testing.T) *laravel.Mapper {
	t.Helper()
	m := newMapperWithSecret()
	laravel.Map[FlakyReport](m, `App\Jobs\FlakyReport`, FlakyReport{}.JobName())
	laravel.Map[DebouncedSync](m, `App\Jobs\DebouncedSync`, DebouncedSync{}.JobName())
	laravel.MapString[LegacyReport](m, `App\Jobs\LegacyReport@handle`, LegacyReport{}.JobName())
	enc, err := laravel.NewEncrypter("base64:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	require.NoError(t, err)
	m.UseEncrypter(enc)
	require.NoError(t, m.Err())
	return m
}

// Each version's payloads decode with the fields that version writes.
func TestLaravelVersionsPayloadsDecode(t *testing.T) {
	t.Parallel()
	for _, v := range laravelVersions {
		flaky, err := laravel.DecodePayload(fixture(t, v.dir, "flaky_report"))
		require.NoError(t, err, v.dir)
		require.Equal(t, int64(5), *flaky.MaxTries, v.dir)
		require.Equal(t, int64(2), *flaky.MaxExceptions, v.dir)
		require.Equal(t, int64(30), *flaky.Timeout, v.dir)
		require.True(t, flaky.FailOnTimeout, v.dir)
		require.Equal(t, []time.Duration{time.Second, 5 * time.Second, 10 * time.Second}, flaky.BackoffDelays(), v.dir)
		later, err := laravel.DecodePayload(fixture(t, v.dir, "resize_avatar_later"))
		require.NoError(t, err, v.dir)
		cmd, ok := later.Command()
		require.True(t, ok, v.dir)
		require.Equal(t, `App\Jobs\ResizeAvatar`, cmd.CommandName, v.dir)
		if v.major >= 12 { // createdAt, data.batchId and delay
			require.NotNil(t, later.CreatedAt, v.dir)
			require.Equal(t, int64(30), *later.Delay, v.dir)
			require.Contains(t, string(later.Data), `"batchId":null`, v.dir)
		} else {
			require.Nil(t, later.CreatedAt, v.dir)
			require.Nil(t, later.Delay, v.dir)
		}
		str, err := laravel.DecodePayload(fixture(t, v.dir, "string_job"))
		require.NoError(t, err, v.dir)
		require.Equal(t, `App\Jobs\LegacyReport@handle`, str.Job, v.dir)
	}
}

// A Go worker runs each version's payloads, fails one into the app's
// failed_jobs table with the payload as the version pushed it, and
// releases one with only its attempts changed.
func TestLaravelVersionsPayloadsRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := setupFailedJobs(t, ctx)
	m := versionsMapper(t)
	var mu sync.Mutex
	var ran []string
	note := func(format string, args ...any) {
		mu.Lock()
		ran = append(ran, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	rt := runtime.NewRouter()
	runtime.Register(rt, SendWelcomeEmail{}.JobName(), func(_ context.Context, j SendWelcomeEmail) error {
		note("welcome %d %s %v", j.UserID, j.Email, j.Tags)
		return runtime.ReleaseRequest(time.Hour)
	})
	runtime.Register(rt, ResizeAvatar{}.JobName(), func(_ context.Context, j ResizeAvatar) error {
		note("resize %d %v", j.UserID, j.Sizes)
		return nil
	})
	runtime.Register(rt, SendSecret{}.JobName(), func(_ context.Context, j SendSecret) error {
		note("secret %d %s", j.UserID, j.Secret)
		return nil
	})
	runtime.Register(rt, LegacyReport{}.JobName(), func(_ context.Context, j LegacyReport) error {
		note("legacy %d", j.ReportID)
		return nil
	})
	runtime.Register(rt, FlakyReport{}.JobName(), func(_ context.Context, j FlakyReport) error {
		note("flaky %d", j.ReportID)
		return runtime.FailRequest(errors.New("the report service is gone"))
	})
	runtime.Register(rt, DebouncedSync{}.JobName(), func(_ context.Context, j DebouncedSync) error {
		note("sync %d", j.AccountID)
		return nil
	})
	for _, v := range laravelVersions {
		queue := "v" + strings.ReplaceAll(v.dir, ".", "_")
		names := []string{"send_welcome_email", "resize_avatar_later", "send_secret", "string_job", "flaky_report"}
		for _, name := range names {
			require.NoError(t, b.q.Push(ctx, queue, fixture(t, v.dir, name)), v.dir)
		}
		ran = nil
		w, err := laravel.NewWorker(b.q, m, rt, laravel.WorkerConfig{
			Queues: []string{queue}, Sleep: 10 * time.Millisecond, StopWhenEmpty: true,
			FailedJobs: &laravel.FailedJobs{DB: b.db, Table: b.table},
		})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
		require.ElementsMatch(t, []string{
			"welcome 7 ada@example.com [welcome n7]", "resize 8 [64 128]", "secret 10 s3cret", "legacy 5", "flaky 9",
		}, ran, v.dir)

		var payload string
		require.NoError(t, b.db.QueryRowContext(ctx, "SELECT payload FROM "+b.table+" WHERE queue = $1", queue).Scan(&payload), v.dir)
		require.Equal(t, string(fixture(t, v.dir, "flaky_report")), payload, "%s: failed_jobs holds the payload as pushed", v.dir)

		delayed, err := b.q.Client().ZRange(ctx, b.prefix+"queues:"+queue+":delayed", 0, -1).Result()
		require.NoError(t, err)
		want := bytes.Replace(fixture(t, v.dir, "send_welcome_email"), []byte(`"attempts":0`), []byte(`"attempts":1`), 1)
		require.Equal(t, []string{string(want)}, delayed, "%s: released with its attempts counted, every other byte as pushed", v.dir)
		sizes, err := b.q.Sizes(ctx, queue)
		require.NoError(t, err)
		require.Equal(t, laravel.Sizes{Delayed: 1}, sizes, v.dir)
	}
}

// lockKeys reads a version's lock_keys.json: the cache keys its
// UniqueLock and DebounceLock build.
func lockKeys(t *testing.T, dir string) map[string]string {
	t.Helper()
	var keys map[string]string
	require.NoError(t, json.Unmarshal(fixture(t, dir, "lock_keys"), &keys))
	return keys
}

// openVersion opens b's connection for an app of Laravel major.
func openVersion(t *testing.T, b phpBundle, major int) *laravel.Queue {
	t.Helper()
	q, closeQ, err := laravel.Open(context.Background(), fmt.Sprintf("%s&laravel=%d", b.url, major))
	require.NoError(t, err)
	t.Cleanup(func() { _ = closeQ() })
	return q
}

// A unique job's lock is at the key the app's version builds (8 to 10:
// class and ID; 11: a ":" between; 12 and 13: likewise, or a hash of
// displayName()), for a Go dispatch and a Go worker's release.
func TestLaravelVersionsUniqueLockKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := setupPHP(t)
	m := newMapper()
	laravel.Map[UniqueReport](m, `App\Jobs\UniqueReport`, UniqueReport{}.JobName())
	rt := newRecorder(0).router()
	runtime.Register(rt, UniqueReport{}.JobName(), func(context.Context, UniqueReport) error { return nil })
	for _, v := range laravelVersions {
		q := openVersion(t, b, v.major)
		key := b.prefix + "laravel_cache:" + lockKeys(t, v.dir)["unique"]
		d, err := laravel.NewDispatcher(q, m)
		require.NoError(t, err)
		queue := "unique" + fmt.Sprint(v.major)
		_, err = dispatch(ctx, d, runtime.NewPendingDispatch(UniqueReport{ReportID: 5}).OnQueue(queue))
		require.NoError(t, err, v.dir)
		require.Equal(t, int64(1), q.Client().Exists(ctx, key).Val(), "%s: the lock is at %s", v.dir, key)
		w, err := laravel.NewWorker(q, m, rt, laravel.WorkerConfig{Queues: []string{queue}, Sleep: 10 * time.Millisecond, StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed()})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
		require.Zero(t, q.Client().Exists(ctx, key).Val(), "%s: the worker released it", v.dir)
	}
	_, _, err := laravel.Open(ctx, b.url+"&laravel=9000")
	require.ErrorContains(t, err, "laravel.Config.Laravel (9000) must be a major version from 8 to 13")
}

// A Laravel 13 debounced job that a newer dispatch superseded (the
// debounce lock has another owner) is deleted without running, as
// CallQueuedHandler does; the newest one, or one whose lock is gone,
// runs.
func TestLaravel13DebouncedJobs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := setupPHP(t)
	q := openVersion(t, b, 13)
	m := laravel.NewMapper()
	laravel.Map[DebouncedSync](m, `App\Jobs\DebouncedSync`, DebouncedSync{}.JobName())
	var ran atomic.Int32
	rt := runtime.NewRouter()
	runtime.Register(rt, DebouncedSync{}.JobName(), func(_ context.Context, j DebouncedSync) error {
		require.Equal(t, 11, j.AccountID)
		ran.Add(1)
		return nil
	})
	lock := b.prefix + "laravel_cache:" + lockKeys(t, "13.x")["debounce"]
	payload := fixture(t, "13.x", "debounced_sync")
	owner := "owner-of-the-newest-dispatch-0000000000000"
	serialized := func(s string) string { return fmt.Sprintf("s:%d:%q;", len(s), s) }
	for _, tc := range []struct {
		name string
		lock string // "" for none
		runs bool
	}{
		{"superseded", serialized("owner-of-a-later-dispatch-000000000000000"), false},
		{"the newest", serialized(owner), true},
		{"lock gone", "", true},
	} {
		if tc.lock == "" {
			require.NoError(t, q.Client().Del(ctx, lock).Err())
		} else {
			require.NoError(t, q.Client().Set(ctx, lock, tc.lock, time.Minute).Err())
		}
		require.NoError(t, q.Push(ctx, "sync", payload))
		before := ran.Load()
		w, err := laravel.NewWorker(q, m, rt, laravel.WorkerConfig{Queues: []string{"sync"}, Sleep: 10 * time.Millisecond, StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed()})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
		require.Equal(t, tc.runs, ran.Load() > before, tc.name)
		sizes, err := q.Sizes(ctx, "sync")
		require.NoError(t, err)
		require.Equal(t, laravel.Sizes{}, sizes, "%s: the job is gone", tc.name)
		n, err := runtime.NewInspector(b.engine).Failed().Count(ctx, "laravel")
		require.NoError(t, err)
		require.Zero(t, n, "%s: not failed", tc.name)
	}
}

// A queue that Laravel 12+'s queue:pause paused (the cache key
// illuminate:queue:paused:CONNECTION:QUEUE, QueueManager::pause), or
// 13's pause of every queue (illuminate:queues:paused), is skipped by a
// Go worker, as by Laravel's; resumed, it runs.
func TestLaravelPausedQueuesAreSkipped(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := setupPHP(t)
	q, closeQ, err := laravel.Open(ctx, b.url+"&laravel=13&connection=jobs")
	require.NoError(t, err)
	t.Cleanup(func() { _ = closeQ() })
	rec := newRecorder(0)
	run := func() {
		w, err := laravel.NewWorker(q, newMapper(), rec.router(), laravel.WorkerConfig{Queues: []string{"paused", "open"}, Sleep: 10 * time.Millisecond, StopWhenEmpty: true, Failed: runtime.NewInspector(b.engine).Failed()})
		require.NoError(t, err)
		require.NoError(t, w.Run(ctx))
	}
	sizes := func(queue string) laravel.Sizes {
		s, err := q.Sizes(ctx, queue)
		require.NoError(t, err)
		return s
	}
	for _, queue := range []string{"paused", "open"} {
		require.NoError(t, q.Push(ctx, queue, fixture(t, "13.x", "resize_avatar_later")))
	}
	one := b.prefix + "laravel_cache:illuminate:queue:paused:jobs:paused"
	require.NoError(t, q.Client().Set(ctx, one, "b:1;", 0).Err())
	run()
	require.Equal(t, laravel.Sizes{Ready: 1}, sizes("paused"), "a paused queue is left alone")
	require.Equal(t, laravel.Sizes{}, sizes("open"), "the others run")

	all := b.prefix + "laravel_cache:illuminate:queues:paused"
	require.NoError(t, q.Client().Del(ctx, one).Err())
	require.NoError(t, q.Client().Set(ctx, all, "b:1;", 0).Err())
	run()
	require.Equal(t, laravel.Sizes{Ready: 1}, sizes("paused"), "every queue is paused")

	require.NoError(t, q.Client().Del(ctx, all).Err())
	run()
	require.Equal(t, laravel.Sizes{}, sizes("paused"), "resumed, it runs")
}
