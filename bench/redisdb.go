package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ownerKey marks a database as the harness's own. The harness flushes
// only a database that is empty or carries this key, and sets it again
// after every flush.
const ownerKey = "jobbench:owner"

// Target is the one Redis database every system runs against.
type Target struct {
	URL string
	DB  int
	rdb *redis.Client
}

// OpenTarget checks rawURL (redis://[:password@]host:port/db) and
// connects. It refuses db 0, which is where other data usually lives, and
// a database that holds keys the harness did not write.
func OpenTarget(ctx context.Context, rawURL string) (*Target, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "redis" {
		return nil, fmt.Errorf("bench: -redis %q: want redis://[:password@]host:port/db (a single server; every system under test must reach it)", rawURL)
	}
	dbPart := strings.Trim(u.Path, "/")
	db, err := strconv.Atoi(dbPart)
	if err != nil || db < 0 {
		return nil, fmt.Errorf("bench: -redis %s names no database: add /N, a database number other than 0, which the harness flushes before every phase", u.Redacted())
	}
	if db == 0 {
		return nil, fmt.Errorf("bench: -redis %s: refusing database 0: the harness flushes its database (FLUSHDB) before every phase, so give it one of its own, e.g. %s://%s/9", u.Redacted(), u.Scheme, u.Host)
	}
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("bench: -redis %s: %w", u.Redacted(), err)
	}
	t := &Target{URL: rawURL, DB: db, rdb: redis.NewClient(opt)}
	if err := t.claim(ctx); err != nil {
		t.rdb.Close()
		return nil, err
	}
	return t, nil
}

// claim checks that the database is empty or already the harness's, and
// marks it.
func (t *Target) claim(ctx context.Context) error {
	n, err := t.rdb.DBSize(ctx).Result()
	if err != nil {
		return fmt.Errorf("bench: redis: %w", err)
	}
	if n > 0 {
		owned, err := t.rdb.Exists(ctx, ownerKey).Result()
		if err != nil {
			return fmt.Errorf("bench: redis: %w", err)
		}
		if owned == 0 {
			return fmt.Errorf("bench: redis database %d holds %d keys the harness did not write; it flushes its database before every phase, so it will only use an empty one (pick another database number)", t.DB, n)
		}
	}
	return t.rdb.Set(ctx, ownerKey, "1", 0).Err()
}

// Flush empties the harness's database (FLUSHDB on it alone) and marks it
// again as the harness's.
func (t *Target) Flush(ctx context.Context) error {
	if err := t.rdb.FlushDB(ctx).Err(); err != nil {
		return fmt.Errorf("bench: flush database %d: %w", t.DB, err)
	}
	return t.rdb.Set(ctx, ownerKey, "1", 0).Err()
}

// UsedMemory returns the server's used_memory from INFO memory, in bytes.
func (t *Target) UsedMemory(ctx context.Context) (int64, error) {
	s, err := t.rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("bench: INFO memory has no used_memory")
}

// CPU returns the CPU time the server has used, user and system, from
// INFO cpu.
func (t *Target) CPU(ctx context.Context) (time.Duration, error) {
	s, err := t.rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total time.Duration
	found := 0
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		for _, key := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(line, key); ok {
				sec, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return 0, fmt.Errorf("bench: INFO cpu: %s %q: %w", key, v, err)
				}
				total += time.Duration(sec * float64(time.Second))
				found++
			}
		}
	}
	if found != 2 {
		return 0, errors.New("bench: INFO cpu lacks used_cpu_sys or used_cpu_user")
	}
	return total, nil
}

// ServerVersion returns the server's redis_version.
func (t *Target) ServerVersion(ctx context.Context) string {
	s, err := t.rdb.Info(ctx, "server").Result()
	if err != nil {
		return "?"
	}
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return "?"
}

// Close closes the harness's own client.
func (t *Target) Close() error { return t.rdb.Close() }
