package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

func TestClear(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.push(t, "default", greet{"a"}, greet{"b"}, greet{"c"})
		b.push(t, "mail", greet{"d"})
		_, err := b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(greet{"e"}).OnQueue("mail").Delay(time.Hour))
		require.NoError(t, err)
		b.failed(t, "mail", 1)

		require.Equal(t, "Cleared 3 jobs from queue default.\n", b.ok(t, "queue:clear"))
		require.Equal(t, "Cleared 2 jobs from queue mail.\nCleared 0 jobs from queue other.\n",
			b.ok(t, "queue:clear", "mail", "--queue", "other"))
		require.Equal(t, runtime.Sizes{Failed: 1}, b.sizes(t, "mail"))
		require.Zero(t, b.sizes(t, "default").Total())
	})
}

func TestRestart(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		w, err := runtime.NewWorker(b.engine, b.router, runtime.WorkerConfig{
			Sleep:  50 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		require.NoError(t, err)
		looping := make(chan struct{}, 1)
		w.Subscribe(func(ev runtime.Event) {
			if ev.Kind == runtime.Looping {
				select {
				case looping <- struct{}{}:
				default:
				}
			}
		})
		ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		<-looping // the worker has read the restart generation

		out := b.ok(t, "queue:restart")
		require.Equal(t, "Broadcast a restart to the workers of prefix "+b.prefix+".\n", out)
		select {
		case err := <-done:
			require.NoError(t, err)
			require.Equal(t, "restart broadcast", w.StopReason())
		case <-time.After(20 * time.Second):
			t.Fatal("the worker did not stop after queue:restart")
		}
	})
}

func TestPauseResume(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		paused := func(q string) bool {
			p, err := runtime.NewInspector(b.engine).QueuePaused(b.ctx, q)
			require.NoError(t, err)
			return p
		}
		require.Equal(t, "Paused queue mail.\nPaused queue billing.\n", b.ok(t, "queue:pause", "mail", "--queue", "billing"))
		require.True(t, paused("mail"))
		require.True(t, paused("billing"))

		b.push(t, "mail", greet{"a"})
		batch, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		require.Empty(t, batch.Jobs)

		require.Equal(t, "Resumed queue mail.\n", b.ok(t, "queue:resume", "mail"))
		require.False(t, paused("mail"))
		require.True(t, paused("billing"))

		for _, v := range []string{"queue:pause", "queue:resume"} {
			code, _, stderr := b.run(t, v)
			require.Equal(t, 2, code)
			require.Contains(t, oneLine(t, stderr), "name the queues to")
		}
	})
}

func TestSize(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		require.Equal(t, "No queues yet: nothing has been dispatched under this prefix.\n", b.ok(t, "queue:size"))

		b.push(t, "mail", greet{"a"}, greet{"b"})
		_, err := b.engine.Dispatch(b.ctx, runtime.NewPendingDispatch(greet{"c"}).OnQueue("mail").Delay(time.Hour))
		require.NoError(t, err)
		b.failed(t, "billing", 2)
		b.push(t, "billing", greet{"d"}, greet{"e"})
		_, err = runtime.NewBroker(b.engine).Reserve(b.ctx, "billing", 1, time.Minute)
		require.NoError(t, err)
		require.NoError(t, runtime.NewInspector(b.engine).PauseQueue(b.ctx, "billing"))

		require.Equal(t, [][]string{
			{"QUEUE", "READY", "DELAYED", "RESERVED", "FAILED", "PAUSED"},
			{"billing", "1", "0", "1", "2", "yes"},
			{"mail", "2", "1", "0", "0", "no"},
		}, rows(b.ok(t, "queue:size")))
		require.Equal(t, [][]string{
			{"QUEUE", "READY", "DELAYED", "RESERVED", "FAILED", "PAUSED"},
			{"mail", "2", "1", "0", "0", "no"},
			{"new", "0", "0", "0", "0", "no"},
		}, rows(b.ok(t, "queue:size", "mail", "new")))

		for _, args := range [][]string{{"queue:size", "a#b"}, {"queue:pause", "a#b"}, {"queue:clear", "mail", "a#b"}} {
			code, _, stderr := b.run(t, args...)
			require.Equal(t, 2, code, args)
			require.Contains(t, oneLine(t, stderr), `invalid input: queue name "a#b" contains "#", which is kept for the names of partitions`, args)
		}
		require.Equal(t, int64(2), b.sizes(t, "mail").Ready, "nothing was cleared")
	})
}

func TestMonitor(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.push(t, "mail", greet{"a"}, greet{"b"}, greet{"c"})
		b.failed(t, "billing", 1)

		out := b.ok(t, "queue:monitor")
		require.Equal(t, [][]string{
			{"QUEUE", "SIZE", "FAILED", "STATUS"},
			{"billing", "0", "1", "OK"},
			{"mail", "3", "0", "OK"},
		}, rows(tableOf(out)))
		// Then a line per server: its memory, and its eviction policy.
		require.Regexp(t, `(?m)^Redis \S+: (\d+(\.\d)? [KMG]?B used, no maxmemory|memory not reported), maxmemory-policy noeviction\.$`, out)
		require.Equal(t, [][]string{
			{"QUEUE", "SIZE", "FAILED", "STATUS"},
			{"mail", "3", "0", "OK"},
		}, rows(tableOf(b.ok(t, "queue:monitor", "mail", "--max", "3"))))

		code, stdout, stderr := b.run(t, "queue:monitor", "--max", "2", "--max-failed", "0")
		require.Equal(t, 1, code)
		require.Equal(t, [][]string{
			{"QUEUE", "SIZE", "FAILED", "STATUS"},
			{"billing", "0", "1", "ALERT"},
			{"mail", "3", "0", "ALERT"},
		}, rows(tableOf(stdout)))
		require.Equal(t, "app queue:monitor: 2 queues over threshold: billing (1 failed, more than 0), mail (3 jobs, more than 2)",
			oneLine(t, stderr))

		code, _, stderr = b.run(t, "queue:monitor", "--max", "-1")
		require.Equal(t, 2, code)
		oneLine(t, stderr)
	})
}

// tableOf returns the lines of out before its first line about a Redis
// server or the outbox.
func tableOf(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Redis ") || strings.HasPrefix(l, "Outbox ") {
			break
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// A Redis whose policy may evict jobs is an alert of queue:monitor, which
// shows its memory against maxmemory.
func TestMonitorAlertsOnAnEvictingRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
	b := &testBundle{ctx: context.Background(), url: "redis://" + srv.Addr, prefix: redistest.Prefix(t), env: map[string]string{}}
	code, stdout, stderr := b.run(t, "queue:monitor", "--allow-eviction")
	require.Equal(t, 1, code, stderr)
	require.Regexp(t, `(?m)^Redis \S+: \d+(\.\d)? [KMG]?B used of maxmemory 64\.0 MB \(\d+%\), maxmemory-policy allkeys-lru\.$`, stdout)
	require.Contains(t, stderr, "maxmemory-policy allkeys-lru may evict jobs; set noeviction")
}

// --partitions tells the commands which queues the application splits
// into partitions, so that they act on every partition.
func TestPartitions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		parted, err := runtime.Open(b.ctx, b.url, runtime.EngineConfig{Prefix: b.prefix, Partitions: map[string]int{"emails": 3}})
		require.NoError(t, err)
		defer parted.Close()
		for i := range 6 {
			_, err := parted.Dispatch(b.ctx, runtime.NewPendingDispatch(greet{Name: fmt.Sprint(i)}).OnQueue("emails"))
			require.NoError(t, err)
		}

		require.Equal(t, [][]string{
			{"QUEUE", "READY", "DELAYED", "RESERVED", "FAILED", "PAUSED"},
			{"emails", "6", "0", "0", "0", "no"},
		}, rows(b.ok(t, "queue:size", "emails", "--partitions", "emails=3")))
		require.Equal(t, "Cleared 6 jobs from queue emails.\n", b.ok(t, "queue:clear", "emails", "--partitions=emails=3,other=2"))

		code, _, stderr := b.run(t, "queue:size", "--partitions", "emails")
		require.Equal(t, 2, code)
		require.Contains(t, oneLine(t, stderr), `invalid value "emails" for flag --partitions: "emails": want NAME=N, such as emails=3`)
	})
}
