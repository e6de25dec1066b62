package laravel_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/laravel"
)

func TestReadEnv(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), ".env")
	require.NoError(t, os.WriteFile(p, []byte(`# a comment
APP_NAME="Shop Front"
export REDIS_HOST=10.0.0.5 # the cache host
REDIS_PASSWORD='p#ss "x"'
REDIS_PREFIX=${APP_NAME}_
EMPTY=

QUOTED="a \"b\" ${REDIS_HOST}"
`), 0o600))
	env, err := laravel.ReadEnv(p)
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"APP_NAME": "Shop Front", "REDIS_HOST": "10.0.0.5", "REDIS_PASSWORD": `p#ss "x"`,
		"REDIS_PREFIX": "Shop Front_", "EMPTY": "", "QUOTED": `a "b" 10.0.0.5`,
	}, env)

	require.NoError(t, os.WriteFile(p, []byte("JUSTAWORD\n"), 0o600))
	_, err = laravel.ReadEnv(p)
	require.ErrorContains(t, err, ".env:1: not KEY=VALUE")
}

// appQueueConfig is a config/queue.php whose Redis connection has a name
// of the app's own.
const appQueueConfig = `<?php
return [
    'default' => env('QUEUE_CONNECTION', 'sync'),
    'connections' => [
        'sync' => [
            'driver' => 'sync',
        ],
        'jobs' => [
            'driver' => 'redis',
            'connection' => 'default',
            'queue' => env('REDIS_QUEUE', 'default'),
            'retry_after' => 90,
            'block_for' => null,
        ],
    ],
    'failed' => [
        'driver' => env('QUEUE_FAILED_DRIVER', 'database-uuids'),
        'database' => env('DB_CONNECTION', 'mysql'),
        'table' => 'failed_jobs',
    ],
];
`

// The doctor, on an app whose jobs Laravel's own code pushed (database
// 13, the doctor's own in this package's tests, under the prefix its
// APP_NAME gives), passes the right setup and names each of five wrong
// ones with its fix.
func TestDoctorFindsTheRealMisconfiguration(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := setupPHP(t)
	addr := redistest.Addr(t)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	tag := strings.TrimSuffix(b.prefix, "_laravel_database_")
	right := "shop_" + tag + "_database_"
	b.env = append(b.env, "REDIS_DB=13", "REDIS_PREFIX="+right)
	b.run(t, ctx, "push.php", "2", "emails")
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: 13})
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := rdb.Keys(ctx, right+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
		_ = rdb.Close()
	})
	require.NotZero(t, rdb.LLen(ctx, right+"queues:emails").Val(), "Laravel pushed into database 13")

	base := map[string]string{
		"APP_NAME": "Shop " + tag, "APP_KEY": "base64:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"QUEUE_CONNECTION": "jobs", "REDIS_HOST": host, "REDIS_PORT": port, "REDIS_DB": "13",
	}
	doctor := func(failedConn string, set ...string) (bool, string) {
		env := maps.Clone(base)
		for _, kv := range set {
			k, v, _ := strings.Cut(kv, "=")
			if v == "" {
				delete(env, k)
			} else {
				env[k] = v
			}
		}
		var out bytes.Buffer
		ok := laravel.Doctor(ctx, laravel.DoctorConfig{Env: env, QueueConfig: appQueueConfig, FailedConnection: failedConn}, &out)
		return ok, out.String()
	}

	// The right setup, with a Redis connection of the app's own name.
	ok, out := doctor("jobs")
	require.True(t, ok, out)
	require.Contains(t, out, `OK   QUEUE_CONNECTION "jobs" is a Redis connection (config/queue.php)`)
	require.Contains(t, out, fmt.Sprintf("OK   queues in database 13 under the prefix %q: emails", right))
	require.Contains(t, out, `OK   FailedJobs.Connection "jobs" is the app's Redis queue connection`)
	require.Contains(t, out, "OK   the bridge's URL: laravel+redis://"+addr+"/13?connection=jobs&prefix="+right+"&retry_after=90")
	require.NotContains(t, out, "FAIL")

	// REDIS_URL overrides REDIS_HOST, REDIS_PORT and REDIS_DB, as
	// Laravel's ConfigurationUrlParser has it.
	ok, out = doctor("jobs", "REDIS_URL=redis://"+addr+"/13", "REDIS_HOST=192.0.2.1", "REDIS_DB=0")
	require.True(t, ok, out)
	require.Contains(t, out, "OK   Redis at "+addr+" (from REDIS_URL) answers")

	for _, tc := range []struct {
		name, failedConn string
		set              []string
		want             string
	}{
		{"wrong prefix", "jobs", []string{"REDIS_PREFIX=wrong_" + tag + "_"}, "set REDIS_PREFIX=" + right},
		{"wrong database", "jobs", []string{"REDIS_DB=3"}, "set REDIS_DB=13"},
		{"wrong connection name", "jobs", []string{"QUEUE_CONNECTION=redis"},
			`QUEUE_CONNECTION is "redis", which config/queue.php does not define: Laravel fails with "The [redis] queue connection has not been configured"; set QUEUE_CONNECTION=jobs`},
		{"wrong REDIS_URL", "jobs", []string{"REDIS_URL=redis://" + addr + "/4"}, "set REDIS_URL=redis://" + addr + "/13"},
		{"REDIS_URL at another server", "jobs", []string{"REDIS_URL=redis://127.0.0.1:1/13"}, "set REDIS_URL=redis://" + addr + "/13 (or remove REDIS_URL"},
		{"wrong failed-jobs connection", "", nil,
			`the Go workers record failed jobs with FailedJobs.Connection "redis", and the app's Redis queue connection is "jobs": php artisan queue:retry would fail with "The [redis] queue connection has not been configured"; set laravel.FailedJobs{Connection: "jobs"}`},
	} {
		ok, out := doctor(tc.failedConn, tc.set...)
		require.False(t, ok, "%s:\n%s", tc.name, out)
		require.Contains(t, out, "FAIL ", tc.name)
		require.Contains(t, out, tc.want, "%s:\n%s", tc.name, out)
	}
}

// On a Laravel 13 app (composer.lock), the doctor takes 13's defaults:
// the prefixes built with "-" (shop-front-database-), CACHE_STORE; and
// the bridge's URL says laravel=13. The queues are the payloads Laravel
// 13's own code builds (testdata/versions).
func TestDoctorOnLaravel13(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := redistest.Addr(t)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	tag := redistest.Prefix(t)
	prefix := "shop-" + tag + "-database-"
	q, closeQ, err := laravel.Open(ctx, laravel.Scheme+"redis://"+addr+"/13?prefix="+prefix)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = q.Client().Del(context.Background(), prefix+"queues:default", prefix+"queues:default:notify").Err()
		_ = closeQ()
	})
	payload, err := os.ReadFile(filepath.Join("testdata", "versions", "13.x", "send_welcome_email.json"))
	require.NoError(t, err)
	require.NoError(t, q.Push(ctx, "default", bytes.TrimSpace(payload)))

	major, err := laravel.LaravelVersion([]byte(`{"packages":[{"name":"laravel/prompts","version":"v0.3.5"},{"name":"laravel/framework","version":"v13.26.1"}]}`))
	require.NoError(t, err)
	require.Equal(t, 13, major)
	env := map[string]string{"APP_TIMEZONE": "America/New_York", "APP_NAME": "Shop " + tag, "QUEUE_CONNECTION": "redis", "REDIS_HOST": host, "REDIS_PORT": port, "REDIS_DB": "13", "CACHE_STORE": "redis", "REDIS_CACHE_DB": "13"}
	var out bytes.Buffer
	ok := laravel.Doctor(ctx, laravel.DoctorConfig{Env: env, Laravel: major}, &out)
	require.True(t, ok, out.String())
	require.Contains(t, out.String(), fmt.Sprintf("OK   queues in database 13 under the prefix %q: default", prefix))
	require.Contains(t, out.String(), fmt.Sprintf("under %q", prefix+"shop-"+tag+"-cache-"))
	require.Contains(t, out.String(), "&laravel=13&prefix="+prefix)
	require.Contains(t, out.String(), `laravel.FailedJobs{Timezone: time.LoadLocation("America/New_York")}`)

	// Taken for Laravel 8, the same app's prefix looks wrong.
	out.Reset()
	require.False(t, laravel.Doctor(ctx, laravel.DoctorConfig{Env: env}, &out))
	require.Contains(t, out.String(), "Laravel 8's defaults are assumed")
}
