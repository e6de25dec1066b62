package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisAddrEnv names the variable holding the address of the Redis the
// tests use; scripts/test sets it. Without it, TestMain starts a
// redis-server of its own on a free port.
const redisAddrEnv = "JOBGEN_TEST_REDIS_ADDR"

// testDB is the database the tests flush and use: never 0.
const testDB = 9

var redisAddr string

func TestMain(m *testing.M) {
	MaybeRunChild() // the rss phase's worker subprocess is this binary
	stop, err := startRedis()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench tests:", err)
		os.Exit(2)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startRedis uses the server named by redisAddrEnv, or starts
// redis-server on a free loopback port with nothing saved to disk.
func startRedis() (stop func(), err error) {
	if a := os.Getenv(redisAddrEnv); a != "" {
		redisAddr = a
		return func() {}, ping(a)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not installed and %s is not set: run scripts/test, or point %s at a Redis 7 server", redisAddrEnv, redisAddrEnv)
	}
	// A port picked free may be taken before the server binds it: the
	// start is made again on another.
	for try := 1; ; try++ {
		stop, err = startOn(bin)
		if err == nil || !errors.Is(err, errPortTaken) || try == 5 {
			return stop, err
		}
	}
}

// errPortTaken is what startOn returns when its port was taken.
var errPortTaken = errors.New("the port was taken before redis-server could bind it")

// startOn starts redis-server on a port picked free, and waits until it
// answers.
func startOn(bin string) (stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "jobbench-redis-*")
	if err != nil {
		return nil, err
	}
	logFile := filepath.Join(dir, "redis.log")
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning", "--logfile", logFile)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	redisAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err = ping(redisAddr); err == nil {
			return stop, nil
		}
		if log, _ := os.ReadFile(logFile); strings.Contains(string(log), "Address already in use") {
			stop()
			return nil, errPortTaken
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on %s did not answer: %w", redisAddr, err)
		}
	}
}

func ping(addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// testURL is the URL of database db on the tests' Redis.
func testURL(db int) string { return "redis://" + redisAddr + "/" + strconv.Itoa(db) }
