package console

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// doctorEnv are the variables the doctor reads; one set in the process's
// environment wins over the .env's, as with Laravel's Dotenv.
var doctorEnv = []string{
	"APP_NAME", "APP_KEY", "QUEUE_CONNECTION", "REDIS_URL", "REDIS_HOST", "REDIS_PORT", "REDIS_USERNAME",
	"REDIS_PASSWORD", "REDIS_DB", "REDIS_CACHE_DB", "REDIS_PREFIX", "REDIS_QUEUE", "REDIS_QUEUE_RETRY_AFTER", "APP_TIMEZONE",
	"CACHE_DRIVER", "CACHE_STORE", "CACHE_PREFIX",
}

var laravelDoctorVerb = &verb{
	name:    "laravel:doctor",
	summary: "Check a Laravel app's setup for the bridge, and say what is wrong and how to fix it",
	maxArgs: 0,
	noRedis: true,
	about: `Run it in the Laravel app's directory (go run
github.com/jobgen/jobgen/cmd/jobgen@latest laravel:doctor needs no go.mod).
It reads the app's .env, the process's environment over it, and
config/queue.php, as Laravel reads them, and checks what the Laravel
bridge needs: that QUEUE_CONNECTION names a Redis connection of
config/queue.php; that the Go workers' FailedJobs.Connection
(--failed-connection) is that connection's name, which queue:retry pushes
back through; that Redis answers where REDIS_URL, or REDIS_HOST,
REDIS_PORT and REDIS_DB, point; and that the app's queues are there,
under the prefix (REDIS_PREFIX, else APP_NAME's, or --prefix). When they
are not, it looks for them in every database and under every prefix
of the server, and of REDIS_HOST's when REDIS_URL points elsewhere, and
says what to set. It also checks that queue:restart and maxExceptions
can reach Go workers through the cache store; whether jobgen's failed
store ($JOBGEN_REDIS_URL, or --redis) sits in the database php artisan
cache:clear flushes; and APP_KEY, for encrypted jobs. It ends with the
bridge's connection URL, and exits 1 when a check fails.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var envPath, configPath, failedConn string
		fs.stringVar(&envPath, "env", ".env", "the app's .env file", "")
		fs.meta["env"] = "FILE"
		fs.stringVar(&configPath, "config", "", "the app's config/queue.php", `"config/queue.php" beside the .env, if there is one`)
		fs.meta["config"] = "FILE"
		fs.stringVar(&failedConn, "failed-connection", "", "FailedJobs.Connection of the Go workers that write failed_jobs", `"redis"`)
		fs.meta["failed-connection"] = "NAME"
		return func(ctx context.Context, s *session) error {
			env, err := laravel.ReadEnv(envPath)
			if err != nil {
				return err
			}
			for _, k := range doctorEnv {
				if v := s.c.getenv(k); v != "" {
					env[k] = v
				}
			}
			cfg := laravel.DoctorConfig{Env: env, Prefix: fs.prefix, FailedConnection: failedConn, FailedStore: fs.redis}
			if cfg.FailedStore == "" {
				cfg.FailedStore = s.c.getenv(runtime.URLEnv)
			}
			if lock, err := os.ReadFile(filepath.Join(filepath.Dir(envPath), "composer.lock")); err == nil {
				if cfg.Laravel, err = laravel.LaravelVersion(lock); err != nil {
					return err
				}
			}
			if configPath == "" {
				if p := filepath.Join(filepath.Dir(envPath), "config", "queue.php"); fileExists(p) {
					configPath = p
				}
			}
			if configPath != "" {
				text, err := os.ReadFile(configPath)
				if err != nil {
					return err
				}
				cfg.QueueConfig = string(text)
			}
			if !laravel.Doctor(ctx, cfg, s.out) {
				return errors.New("the setup has a problem: fix what the FAIL lines above say, and run laravel:doctor again")
			}
			return nil
		}
	},
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
