package console

import (
	"context"
	"errors"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

var laravelDoctorVerb = &verb{
	name:    "laravel:doctor",
	summary: "Check a Laravel app's setup for the bridge, and say what is wrong",
	maxArgs: 0,
	noRedis: true,
	about: `Read a Laravel app's .env as its config/database.php, queue.php and
cache.php read it, and check what the Laravel bridge needs, in plain
words: that Redis answers where the queues are; which queues the key
prefix holds, and whether another prefix holds them instead; whether
queue:restart and maxExceptions can reach Go workers through the cache
store; whether jobgen's failed store ($JOBGEN_REDIS_URL, or --redis) sits
in the database php artisan cache:clear flushes; and APP_KEY, for
encrypted jobs. It ends with the bridge's connection URL. It exits 1
when a check fails.`,
	setup: func(c *Command, fs *flags) func(context.Context, *session) error {
		var envPath string
		fs.stringVar(&envPath, "env", ".env", "the app's .env file", "")
		fs.meta["env"] = "FILE"
		return func(ctx context.Context, s *session) error {
			env, err := laravel.ReadEnv(envPath)
			if err != nil {
				return err
			}
			failed := fs.redis
			if failed == "" {
				failed = s.c.getenv(runtime.URLEnv)
			}
			if !laravel.Doctor(ctx, env, failed, s.out) {
				return errors.New("the setup has a problem (the FAIL lines above)")
			}
			return nil
		}
	},
}
