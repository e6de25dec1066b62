package outboxbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime"
)

// env is what every system of a run shares: a schema of the run's own in
// the PostgreSQL, and a key prefix of its own in the Redis.
type env struct {
	cfg    Config
	admin  *pgxpool.Pool // for setup and truncates
	schema string        // holds River's tables and jobgen's outbox
	rdb    redis.UniversalClient
	closer func() error // closes rdb
	prefix string       // starts every jobgen key of the run
}

// openEnv creates the run's schema and opens its Redis client.
func openEnv(ctx context.Context, cfg Config) (*env, error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	tag := hex.EncodeToString(b)
	admin, err := newPool(ctx, cfg.PostgresURL, 4, nil)
	if err != nil {
		return nil, err
	}
	e := &env{cfg: cfg, admin: admin, schema: "outboxbench_" + tag, prefix: "outboxbench:" + tag}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+e.schema); err != nil {
		admin.Close()
		return nil, fmt.Errorf("create schema %s: %w", e.schema, err)
	}
	e.rdb, e.closer, err = runtime.OpenClient(cfg.RedisURL)
	if err == nil {
		err = e.rdb.Ping(ctx).Err()
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("redis %s: %w", cfg.RedisURL, err), e.close(ctx))
	}
	return e, nil
}

// newPool opens a pgx pool of size connections on url, with tracer if
// not nil.
func newPool(ctx context.Context, url string, size int, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pc.MaxConns = int32(size)
	pc.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return pool, nil
}

// truncate empties table.
func (e *env) truncate(ctx context.Context, table string) error {
	if _, err := e.admin.Exec(ctx, "TRUNCATE "+table); err != nil {
		return fmt.Errorf("truncate %s: %w", table, err)
	}
	return nil
}

// deleteKeys deletes the Redis keys that start with prefix.
func (e *env) deleteKeys(ctx context.Context, prefix string) error {
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return err
		}
		for s := 0; s < len(keys); s += 500 {
			if err := c.Unlink(ctx, keys[s:min(s+500, len(keys))]...).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	switch c := e.rdb.(type) {
	case *redis.Client:
		return del(ctx, c)
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, del)
	default:
		return fmt.Errorf("delete keys: a %T is neither a node nor a cluster", c)
	}
}

// close drops the run's schema and keys.
func (e *env) close(ctx context.Context) error {
	var errs []error
	if _, err := e.admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+e.schema+" CASCADE"); err != nil {
		errs = append(errs, fmt.Errorf("drop schema %s: %w", e.schema, err))
	}
	e.admin.Close()
	if e.rdb != nil {
		errs = append(errs, e.deleteKeys(ctx, e.prefix+":"), e.closer())
	}
	return errors.Join(errs...)
}

// inTx runs fn in a transaction on pool, and commits it. before, if set,
// runs just before the commit.
func inTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error, before func()) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	if before != nil {
		before()
	}
	return tx.Commit(ctx)
}
