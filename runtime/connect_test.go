package runtime_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// closedPort returns a loopback port that nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

func TestOpenNeedsURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "  "} {
		_, err := runtime.Open(context.Background(), u, runtime.EngineConfig{})
		require.ErrorIs(t, err, runtime.ErrNoURL)
		require.ErrorContains(t, err, runtime.URLEnv)
		require.ErrorContains(t, err, "JOBGEN_REDIS_URL")
		require.ErrorContains(t, err, "embedded://")

		_, _, err = runtime.OpenClient(u)
		require.ErrorIs(t, err, runtime.ErrNoURL)
	}
}

func TestOpenRefusesBadURLs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url  string
		want []string // substrings of the error
	}{
		{"http://redis.invalid:6380", []string{`"http"`, "redis+sentinel", "embedded"}},
		{"mysql://user@db/app", []string{`"mysql"`}},
		{"redis.invalid:6380", []string{"scheme"}},
		{"redis+sentinel://sentinel.invalid:26379", []string{"master name"}},
		{"redis+sentinel://sentinel.invalid:26379/", []string{"master name"}},
		{"rediss+sentinel://sentinel.invalid:26379,sentinel2.invalid:26380", []string{"master name"}},
		{"redis+sentinel://sentinel.invalid:26379/mymaster/notanumber", []string{"notanumber", "not a number"}},
		{"redis://redis.invalid:6380/notanumber", []string{"notanumber"}},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			_, err := runtime.Open(context.Background(), c.url, runtime.EngineConfig{})
			require.ErrorIs(t, err, runtime.ErrInvalid)
			for _, w := range c.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

func TestOpenNeverEchoesPassword(t *testing.T) {
	t.Parallel()
	const secret = "hunter2"
	port := closedPort(t)
	host := fmt.Sprintf("127.0.0.1:%d", port)
	q := "?dial_timeout=100ms&max_retries=-1"
	cases := []struct {
		name string
		url  string
		cfg  runtime.EngineConfig
	}{
		{"unreachable", "redis://:" + secret + "@" + host + "/0" + q, runtime.EngineConfig{}},
		{"unreachable with user", "redis://app:" + secret + "@" + host + "/0" + q, runtime.EngineConfig{}},
		{"unreachable over TLS", "rediss://app:" + secret + "@" + host + "/0" + q, runtime.EngineConfig{}},
		{"bad db", "redis://:" + secret + "@" + host + "/zero", runtime.EngineConfig{}},
		{"bad query", "redis://:" + secret + "@" + host + "/0?dial_timeout=soon", runtime.EngineConfig{}},
		{"bad config", "redis://:" + secret + "@" + host + "/0", runtime.EngineConfig{Prefix: "a{b}"}},
		{"bad port", "redis://:" + secret + "@127.0.0.1:port/0", runtime.EngineConfig{}},
		{"bad escape", "redis://:" + secret + "@" + host + "/0%zz", runtime.EngineConfig{}},
		{"unknown scheme", "http://:" + secret + "@" + host, runtime.EngineConfig{}},
		{"sentinel without master", "redis+sentinel://:" + secret + "@" + host, runtime.EngineConfig{}},
		{"sentinel bad db", "redis+sentinel://:" + secret + "@" + host + "/mymaster/x", runtime.EngineConfig{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			e, err := runtime.Open(ctx, c.url, c.cfg)
			if e != nil {
				_ = e.Close()
			}
			require.Error(t, err)
			t.Log(err)
			require.NotContains(t, err.Error(), secret)
		})
	}
}

func TestOpenRedisDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := redistest.Addr(t)
	prefix := redistest.Prefix(t)
	e, err := runtime.Open(ctx, "redis://"+addr+"/3", runtime.EngineConfig{Prefix: prefix})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })

	j := env("default", "app.Job", "")
	require.NoError(t, e.Push(ctx, j))
	ready := prefix + ":{default}:ready"
	for db, want := range map[int]int64{3: 1, 0: 0} {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
		n, err := c.LLen(ctx, ready).Result()
		_ = c.Close()
		require.NoError(t, err)
		require.Equal(t, want, n, "db %d", db)
	}
	batch, err := runtime.NewBroker(e).Reserve(ctx, "default", 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, batch.Jobs, 1)
	require.Equal(t, j.ID, batch.Jobs[0].ID)
	require.NoError(t, runtime.NewBroker(e).Ack(ctx, batch.Jobs[0].Ref))
}

func TestOpenEmbeddedIsSharedByName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := "embedded://" + redistest.Prefix(t)
	cfg := runtime.EngineConfig{Prefix: redistest.Prefix(t)}
	open := func() *runtime.Engine {
		t.Helper()
		e, err := runtime.Open(ctx, url, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	sizesOf := func(e *runtime.Engine) runtime.Sizes {
		t.Helper()
		s, err := runtime.NewInspector(e).Sizes(ctx, "default")
		require.NoError(t, err)
		return s
	}

	one, two := open(), open()
	j := env("default", "app.Job", "shared")
	require.NoError(t, one.Push(ctx, j))
	batch, err := runtime.NewBroker(two).Reserve(ctx, "default", 10, time.Minute)
	require.NoError(t, err)
	require.Len(t, batch.Jobs, 1)
	require.Equal(t, j.ID, batch.Jobs[0].ID)

	// Another name is another server.
	other, err := runtime.Open(ctx, url+"-other", cfg)
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{}, sizesOf(other))
	require.NoError(t, other.Close())

	// Closing one engine leaves the server to the other.
	require.NoError(t, one.Close())
	require.Error(t, one.Client().Ping(ctx).Err(), "the closed engine's client is closed")
	require.NoError(t, two.Push(ctx, env("default", "app.Job", "")))
	require.Equal(t, runtime.Sizes{Ready: 1, Reserved: 1}, sizesOf(two))
	three := open()
	require.Equal(t, runtime.Sizes{Ready: 1, Reserved: 1}, sizesOf(three))

	// Closing the last one stops the server: a new one starts empty.
	require.NoError(t, two.Close())
	require.NoError(t, three.Close())
	four := open()
	require.Equal(t, runtime.Sizes{}, sizesOf(four))
	qs, err := runtime.NewInspector(four).Queues(ctx)
	require.NoError(t, err)
	require.Empty(t, qs)
}

func TestOpenEmbeddedFailedOpenReleasesServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := "embedded://" + redistest.Prefix(t)
	cfg := runtime.EngineConfig{Prefix: redistest.Prefix(t)}

	e, err := runtime.Open(ctx, url, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Push(ctx, env("default", "app.Job", "")))

	// An open that fails validation must not keep the server alive.
	_, err = runtime.Open(ctx, url, runtime.EngineConfig{Prefix: "bad{"})
	require.ErrorIs(t, err, runtime.ErrInvalid)
	require.NoError(t, e.Close())

	again, err := runtime.Open(ctx, url, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = again.Close() })
	s, err := runtime.NewInspector(again).Sizes(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, runtime.Sizes{}, s)
}

func TestEngineConfigValidation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cfg   runtime.EngineConfig
		field string
	}{
		{runtime.EngineConfig{Prefix: "app{1"}, "Prefix"},
		{runtime.EngineConfig{Prefix: "app}"}, "Prefix"},
		{runtime.EngineConfig{MaxPayload: -1}, "MaxPayload"},
		{runtime.EngineConfig{MigrateLimit: -1}, "MigrateLimit"},
		{runtime.EngineConfig{MigrateLimit: 10_001}, "MigrateLimit"},
		{runtime.EngineConfig{RetryWindow: time.Millisecond}, "RetryWindow"},
		{runtime.EngineConfig{RetryWindow: 2 * time.Hour}, "RetryWindow"},
	}
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				_, err := runtime.Open(context.Background(), be.URL, c.cfg)
				require.ErrorIs(t, err, runtime.ErrInvalid, "%+v", c.cfg)
				require.ErrorContains(t, err, c.field)
			}
			// NewEngine validates the same way.
			rdb, closeClient, err := runtime.OpenClient(be.URL)
			require.NoError(t, err)
			defer func() { _ = closeClient() }()
			_, err = runtime.NewEngine(context.Background(), rdb, runtime.EngineConfig{Prefix: "x{y}"})
			require.ErrorIs(t, err, runtime.ErrInvalid)
			require.ErrorContains(t, err, "Prefix")

			e, err := runtime.Open(context.Background(), be.URL, runtime.EngineConfig{Prefix: redistest.Prefix(t)})
			require.NoError(t, err)
			defer func() { _ = e.Close() }()
			got := e.Config()
			require.Equal(t, 1<<20, got.MaxPayload)
			require.Zero(t, got.FailedMaxCount, "failed jobs are kept: no count bound")
			require.Zero(t, got.FailedMaxAge, "failed jobs are kept: no age bound")
			require.Equal(t, 1000, got.MigrateLimit)
			require.Equal(t, time.Minute, got.RetryWindow)
		})
	}
}
