// Package harness runs the fault suite's processes: redis-servers of its
// own, worker subprocesses, a flaky TCP proxy; and checks what came of a
// run, like a total-queue checker: which acknowledged jobs were lost,
// which ran more than once, and whether every job ended in exactly one
// place.
package harness

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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server this suite started, on a free loopback port,
// with its files in a temporary directory. It can be killed and started
// again on the same port and directory. Only servers the suite started
// are ever flushed, killed or reconfigured.
type Server struct {
	t    testing.TB
	port int
	dir  string
	args []string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// StartRedis starts a redis-server with nothing saved to disk, plus args
// (redis-server options such as "--maxmemory", "10mb"), and stops it when
// the test ends.
func StartRedis(t testing.TB, args ...string) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: run ./scripts/test, which installs it")
	}
	dir := t.TempDir()
	// A port picked free may be taken before the server binds it: the
	// start is made again on another.
	for try := 1; ; try++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{t: t, port: port, dir: dir, args: args}
		err = s.start()
		if err == nil {
			t.Cleanup(func() { s.Kill() })
			return s
		}
		s.Kill()
		if !errors.Is(err, errPortTaken) || try == 5 {
			t.Fatal(err)
		}
	}
}

func freePort() (int, error) {
	for range 10 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port != 6379 {
			return port, nil
		}
	}
	return 0, errors.New("no free port")
}

// Start starts the server (again), and waits until it answers and has
// loaded its data.
func (s *Server) Start() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// errPortTaken is what start returns when the server's port was taken.
var errPortTaken = errors.New("harness: the port was taken before redis-server could bind it")

func (s *Server) start() error {
	logFile := filepath.Join(s.dir, "redis.log")
	_ = os.Remove(logFile)
	args := []string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--loglevel", "warning",
		"--logfile", logFile,
	}
	args = append(args, s.args...)
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := s.ping()
		if err == nil {
			return nil
		}
		log, _ := os.ReadFile(logFile)
		if strings.Contains(string(log), "Address already in use") {
			return fmt.Errorf("%w: %s", errPortTaken, s.Addr())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer: %v\n%s", s.Addr(), err, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) ping() error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.Ping(ctx).Err() // LOADING while the AOF loads
}

// Kill kills the server with SIGKILL and waits for it to die.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Client returns a new client of the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// Log returns the server's log.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return string(b)
}

// String names the server in messages.
func (s *Server) String() string { return fmt.Sprintf("redis-server %s", s.Addr()) }
