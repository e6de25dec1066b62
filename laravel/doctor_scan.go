package laravel

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// queuePlace is where some of Laravel's queues are: a server, a
// database and a prefix.
type queuePlace struct {
	addr, from string
	db         int
	prefix     string
	queues     []string
}

// scanLimit caps the keys the doctor reads in one database.
const scanLimit = 200_000

// scanServer finds every prefix and database of the server at addr that
// holds Laravel queues: lists and sorted sets named PREFIX + "queues:" +
// NAME, with :delayed, :reserved or :notify after it.
func scanServer(ctx context.Context, s appSetup, addr string) ([]queuePlace, error) {
	open := func(db int) *redis.Client {
		return redis.NewClient(&redis.Options{Addr: addr, Username: s.username, Password: s.password, DB: db, DialTimeout: 2 * time.Second, MaxRetries: -1})
	}
	first := open(s.db)
	defer first.Close()
	if err := first.Ping(ctx).Err(); err != nil {
		return nil, err
	}
	databases := 16
	if v, err := first.ConfigGet(ctx, "databases").Result(); err == nil {
		if n, err := strconv.Atoi(v["databases"]); err == nil && n > 0 {
			databases = n
		}
	}
	var out []queuePlace
	for db := range databases {
		rdb := open(db)
		found, err := scanDB(ctx, rdb)
		_ = rdb.Close()
		if err != nil {
			if db == s.db {
				return nil, err
			}
			continue // a database that may not be selected (a proxy's)
		}
		for prefix, queues := range found {
			out = append(out, queuePlace{db: db, prefix: prefix, queues: queues})
		}
	}
	return out, nil
}

// scanDB returns the queues of one database by prefix.
func scanDB(ctx context.Context, rdb *redis.Client) (map[string][]string, error) {
	names := map[string]map[string]bool{}
	var keys []string
	iter := rdb.Scan(ctx, 0, "*queues:*", 1000).Iterator()
	for n := 0; iter.Next(ctx) && n < scanLimit; n++ {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, err
	}
	// Only lists and sorted sets are Laravel's queues.
	for len(keys) > 0 {
		batch := keys[:min(len(keys), 500)]
		keys = keys[len(batch):]
		cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range batch {
				p.Type(ctx, k)
			}
			return nil
		})
		if err != nil && err != redis.Nil {
			return nil, err
		}
		for i, c := range cmds {
			typ := c.(*redis.StatusCmd).Val()
			if typ != "list" && typ != "zset" {
				continue
			}
			prefix, name, ok := splitQueueKey(batch[i])
			if !ok {
				continue
			}
			if names[prefix] == nil {
				names[prefix] = map[string]bool{}
			}
			names[prefix][name] = true
		}
	}
	out := map[string][]string{}
	for prefix, set := range names {
		for name := range set {
			out[prefix] = append(out[prefix], name)
		}
		slices.Sort(out[prefix])
	}
	return out, nil
}

// splitQueueKey splits a key of RedisQueue's into its prefix and queue.
func splitQueueKey(key string) (prefix, name string, ok bool) {
	i := strings.Index(key, "queues:")
	if i < 0 {
		return "", "", false
	}
	prefix, name = key[:i], key[i+len("queues:"):]
	for _, suffix := range []string{":delayed", ":reserved", ":notify"} {
		name = strings.TrimSuffix(name, suffix)
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "{"), "}")
	return prefix, name, name != ""
}

// rankPlaces puts first the places likeliest to be the app's: its
// server, then its prefix in another database, then its database under
// another prefix that holds its APP_NAME, then any other.
func rankPlaces(places []queuePlace, s appSetup) {
	score := func(p queuePlace) int {
		n := 0
		if p.addr != s.addr() {
			n += 8
		}
		if p.prefix != s.prefix {
			n += 2
			if !slices.ContainsFunc(s.appSlugs, func(a string) bool { return strings.Contains(p.prefix, a) }) {
				n += 4
			}
		}
		if p.db != s.db {
			n++
		}
		return n
	}
	slices.SortStableFunc(places, func(a, b queuePlace) int {
		return cmp.Or(cmp.Compare(score(a), score(b)), cmp.Compare(a.db, b.db), cmp.Compare(a.prefix, b.prefix))
	})
}

func (p queuePlace) describe() string {
	return fmt.Sprintf("%s database %d holds queues under the prefix %q (%s)", p.addr, p.db, p.prefix, strings.Join(p.queues, ", "))
}

// fix says what to set so that the app's setup points at p.
func (p queuePlace) fix(s appSetup) string {
	var sets []string
	if p.addr != s.addr() {
		// REDIS_URL points away from the server REDIS_HOST names.
		alt := s
		alt.host, alt.port = splitAddr(p.addr)
		return fmt.Sprintf("REDIS_URL=%s (or remove REDIS_URL, which overrides REDIS_HOST and REDIS_PORT, and set REDIS_DB=%d)", alt.redisURL(p.db), p.db)
	}
	if p.db != s.db {
		sets = append(sets, s.withDB(p.db))
	}
	if p.prefix != s.prefix {
		sets = append(sets, s.withPrefix(p.prefix))
	}
	return strings.Join(sets, " and ")
}

func splitAddr(addr string) (host, port string) {
	u, err := url.Parse("redis://" + addr)
	if err != nil {
		return addr, "6379"
	}
	return u.Hostname(), u.Port()
}

// checkCache says whether Go can see the cache store, which holds
// queue:restart's signal and the shared maxExceptions counts.
func checkCache(s appSetup, say func(level, format string, args ...any)) {
	switch {
	case s.cacheDriver != "redis":
		name := "CACHE_DRIVER"
		if s.laravel >= 11 {
			name = "CACHE_STORE"
		}
		say("WARN", "%s is %q: queue:restart and maxExceptions live in the cache store, which Go reads only on Redis; with %q, php artisan queue:restart does not stop Go workers, and maxExceptions is counted per side", name, s.cacheDriver, s.cacheDriver)
	case s.cacheDB != s.db:
		say("WARN", "the cache is in Redis database %d (REDIS_CACHE_DB), the queues in %d: the bridge reads the cache in the queues' database, so queue:restart and maxExceptions do not reach Go workers; set REDIS_CACHE_DB=%d", s.cacheDB, s.db, s.db)
	default:
		say("OK", "the cache store is Redis, in the queues' database, under %q: queue:restart and maxExceptions reach Go workers", s.cachePrefix)
	}
}

// checkFailedStore warns when jobgen's failed store is in the database
// that php artisan cache:clear flushes.
func checkFailedStore(s appSetup, failedStore string, say func(level, format string, args ...any)) {
	if failedStore == "" {
		return
	}
	u, err := url.Parse(failedStore)
	if err != nil {
		say("WARN", "the failed store's URL does not parse: %v", err)
		return
	}
	db := 0
	if p := strings.Trim(u.Path, "/"); p != "" {
		db, _ = strconv.Atoi(p)
	}
	host, port := u.Hostname(), cmp.Or(u.Port(), "6379")
	if sameHost(host, s.host) && port == s.port && s.cacheDriver == "redis" && db == s.cacheDB {
		say("WARN", "jobgen's failed store (%s) is the cache's database %d: php artisan cache:clear flushes it, and its failed jobs with it; give it a database of its own", failedStore, db)
		return
	}
	say("OK", "jobgen's failed store is apart from the cache that cache:clear flushes")
}

func sameHost(a, b string) bool {
	loop := func(h string) bool { return h == "localhost" || h == "127.0.0.1" || h == "::1" }
	return a == b || (loop(a) && loop(b))
}
