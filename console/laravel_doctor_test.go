package console_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
)

// writeEnv writes a Laravel .env with lines, and returns its path.
func writeEnv(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".env")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return p
}

func TestLaravelDoctor(t *testing.T) {
	t.Parallel()
	addr := redistest.Addr(t)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	b := setup(t, redistest.Backends(t)[0])
	// Queues of the app, in database 12 (the doctor's own here: no other
	// test uses it; bench's smoke test wants 9 empty), under the
	// prefix APP_NAME="Shop Front" gives.
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: 12})
	ctx := context.Background()
	tag := strings.ReplaceAll(b.prefix, "-", "_")
	right := "shop_front_" + tag + "_database_"
	require.NoError(t, rdb.RPush(ctx, right+"queues:emails", "{}").Err())
	require.NoError(t, rdb.ZAdd(ctx, right+"queues:emails:delayed", redis.Z{Score: 1, Member: "{}"}).Err())
	t.Cleanup(func() {
		rdb.Del(context.Background(), right+"queues:emails", right+"queues:emails:delayed")
		_ = rdb.Close()
	})
	base := []string{
		`APP_NAME="Shop Front ` + tag + `"`, "APP_KEY=base64:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"QUEUE_CONNECTION=redis", "REDIS_HOST=" + host, "REDIS_PORT=" + port, "REDIS_DB=12",
	}
	doctor := func(env string, extra ...string) (int, string, string) {
		if b.env == nil {
			b.env = map[string]string{}
		}
		return b.runRaw(t, append([]string{"laravel:doctor", "--env", env}, extra...)...)
	}

	// Laravel's defaults: the cache on file, so queue:restart does not
	// reach Go; the failed store in the cache's database.
	code, out, stderr := doctor(writeEnv(t, base...), "--redis", "redis://"+addr+"/1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "OK   Redis at "+addr+" (from REDIS_HOST, REDIS_PORT, REDIS_DB) answers")
	require.Contains(t, out, fmt.Sprintf("OK   queues in database 12 under the prefix %q: emails", right))
	require.Contains(t, out, `WARN CACHE_DRIVER is "file": queue:restart and maxExceptions live in the cache store`)
	require.NotContains(t, out, "cache:clear flushes it", "the cache is on file: nothing flushes database 1")
	require.Contains(t, out, "OK   the bridge's URL: laravel+redis://"+addr+"/12?prefix="+right+"&retry_after=90")

	// The cache on Redis, in the queues' database; the failed store where
	// cache:clear would flush it.
	code, out, _ = doctor(writeEnv(t, append(base, "CACHE_DRIVER=redis", "REDIS_CACHE_DB=12")...), "--redis", "redis://127.0.0.1:"+port+"/12")
	require.Equal(t, 0, code)
	require.Contains(t, out, "OK   the cache store is Redis, in the queues' database")
	require.Contains(t, out, "cache:clear flushes it")
	require.Contains(t, out, "cache_prefix="+right+"shop_front_"+tag+"_cache%3A")

	// A wrong prefix fails, and names the one that holds the queues.
	code, out, stderr = doctor(writeEnv(t, append(base, "REDIS_PREFIX=wrong_"+tag+"_")...))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, fmt.Sprintf("FAIL no queue where the app's setup points (%s, database 12, prefix %q)", addr, "wrong_"+tag+"_"))
	require.Contains(t, out, "set REDIS_PREFIX="+right)
	require.Contains(t, stderr, "the setup has a problem")

	// A wrong database fails, and names the one that holds the queues.
	code, out, _ = doctor(writeEnv(t, append(base[:len(base)-1:len(base)-1], "REDIS_DB=7")...))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "set REDIS_DB=12")

	// --prefix is the prefix checked, over the .env's; a wrong one fails
	// and names the flag to fix.
	code, out, _ = doctor(writeEnv(t, append(base, "REDIS_PREFIX=wrong_"+tag+"_")...), "--prefix", right)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, fmt.Sprintf("OK   queues in database 12 under the prefix %q", right))
	code, out, _ = doctor(writeEnv(t, base...), "--prefix", "other_"+tag+"_")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "set --prefix "+right)

	// REDIS_URL in the process's environment wins over the .env's
	// REDIS_HOST, as with Laravel's Dotenv; a wrong one fails.
	b.env = map[string]string{"REDIS_URL": "redis://" + addr + "/5"}
	code, out, _ = doctor(writeEnv(t, base...))
	b.env = nil
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "set REDIS_URL=redis://"+addr+"/12")

	// A Redis connection of the app's own name, from config/queue.php
	// beside the .env; the Go workers' FailedJobs.Connection must be it.
	app := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(app, "config"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(app, "config", "queue.php"), []byte(`<?php
return ['connections' => ['sync' => ['driver' => 'sync'], 'jobs' => ['driver' => 'redis', 'connection' => 'default']]];
`), 0o600))
	env := filepath.Join(app, ".env")
	require.NoError(t, os.WriteFile(env, []byte(strings.Join(append(base[:2:2], append(base[3:], "QUEUE_CONNECTION=jobs")...), "\n")+"\n"), 0o600))
	code, out, _ = doctor(env, "--failed-connection", "jobs")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, `OK   QUEUE_CONNECTION "jobs" is a Redis connection (config/queue.php)`)
	code, out, _ = doctor(env)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, `set laravel.FailedJobs{Connection: "jobs"}`)

	// A QUEUE_CONNECTION that config/queue.php does not define fails.
	require.NoError(t, os.WriteFile(env, []byte(strings.Join(append(base[:2:2], append(base[3:], "QUEUE_CONNECTION=redis")...), "\n")+"\n"), 0o600))
	code, out, _ = doctor(env, "--failed-connection", "jobs")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, `QUEUE_CONNECTION is "redis", which config/queue.php does not define`)
	require.Contains(t, out, "set QUEUE_CONNECTION=jobs")

	// Redis that does not answer fails, and says where it looked.
	code, out, stderr = doctor(writeEnv(t, "QUEUE_CONNECTION=redis", "REDIS_HOST=127.0.0.1", "REDIS_PORT=1"))
	require.Equal(t, 1, code)
	require.Contains(t, out, "FAIL Redis at 127.0.0.1:1 (database 0, from REDIS_HOST, REDIS_PORT, REDIS_DB) does not answer")
	require.Contains(t, stderr, "the setup has a problem")

	// A missing .env is an error that names it.
	code, _, stderr = doctor(filepath.Join(t.TempDir(), "none.env"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "none.env")
}
