// Package redistest gives tests a real redis-server and an embedded one.
//
// A test binary's TestMain calls Main. It uses the server at the address
// in JOBGEN_TEST_REDIS_ADDR if set; otherwise it starts redis-server on a
// free loopback port, with nothing saved to disk, and stops it when the
// tests end. Each test gets its own key prefix, so tests run in parallel
// and never touch other data on the server; nothing is ever flushed.
//
// If JOBGEN_TEST_CLUSTER_ADDRS holds the addresses of a Redis Cluster (a
// comma list, as scripts/cluster prints them), Backends adds it, so the
// same suites run on a cluster too. scripts/test always sets it.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/miniserver"
	"github.com/jobgen/jobgen/internal/urlscheme"
)

// AddrEnv names the environment variable holding the address of a Redis 7
// server for the tests.
const AddrEnv = "JOBGEN_TEST_REDIS_ADDR"

// ClusterEnv names the environment variable holding the node addresses of
// a Redis Cluster for the tests, as a comma list. Unset, the suites run
// without a cluster.
const ClusterEnv = "JOBGEN_TEST_CLUSTER_ADDRS"

var addr string

// The suites run on embedded:// too (Backends), which a program has only
// through runtime/embedded; this package may not import runtime, as the
// runtime's own tests use it.
func init() { urlscheme.Register("embedded", miniserver.Open) }

// Main runs the tests of a package with a real Redis, then exits.
func Main(m *testing.M) {
	stop, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "redistest:", err)
		os.Exit(2)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func start() (func(), error) {
	if a := os.Getenv(AddrEnv); a != "" {
		addr = a
		return func() {}, ping(a)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not installed and %s is not set: run the README's test command, which installs it, or point %s at a Redis 7 server", AddrEnv, AddrEnv)
	}
	dir, err := os.MkdirTemp("", "jobgen-redis-*")
	if err != nil {
		return nil, err
	}
	cmd, a, err := launch(bin, dir, 1, func(ports []int) []string {
		return []string{"--port", strconv.Itoa(ports[0]), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning",
			"--logfile", filepath.Join(dir, "redis.log")}
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	addr = a
	return func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}, nil
}

func ping(a string) error {
	c := redis.NewClient(&redis.Options{Addr: a})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// Addr returns the address of the real Redis server.
func Addr(t testing.TB) string {
	t.Helper()
	if addr == "" {
		t.Fatal("redistest: call redistest.Main from TestMain")
	}
	return addr
}

// Backend is a Redis the suite runs on.
type Backend struct {
	Name string // "redis", "embedded" or "cluster"
	// URL opens it. Each embedded URL names a server of its own.
	URL string
}

// Backends returns the real server, a fresh embedded one and, if
// JOBGEN_TEST_CLUSTER_ADDRS is set, the cluster.
func Backends(t testing.TB) []Backend {
	bs := []Backend{
		{Name: "redis", URL: "redis://" + Addr(t) + "/0"},
		{Name: "embedded", URL: "embedded://" + Prefix(t)},
	}
	if addrs := ClusterAddrs(); len(addrs) > 0 {
		bs = append(bs, Backend{Name: "cluster", URL: "redis+cluster://" + strings.Join(addrs, ",")})
	}
	return bs
}

// ClusterAddrs returns the cluster's node addresses from
// JOBGEN_TEST_CLUSTER_ADDRS, or nil if it is unset.
func ClusterAddrs() []string {
	v := strings.TrimSpace(os.Getenv(ClusterEnv))
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// Prefix returns a key prefix unique to this test.
func Prefix(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "jt" + hex.EncodeToString(b[:])
}
