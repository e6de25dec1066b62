package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server (or sentinel) a test started, on a free
// loopback port, with nothing saved to disk. It is stopped when the test
// ends.
type Server struct {
	Addr string
	Dir  string
	cmd  *exec.Cmd
}

// StartServer starts redis-server with args added to its command line and
// waits until it answers.
func StartServer(t testing.TB, args ...string) *Server {
	t.Helper()
	return start1(t, nil, args...)
}

// StartReplica starts a redis-server replicating from master.
func StartReplica(t testing.TB, master string, args ...string) *Server {
	t.Helper()
	host, port, err := net.SplitHostPort(master)
	if err != nil {
		t.Fatalf("redistest: master address %q: %v", master, err)
	}
	return start1(t, nil, append([]string{"--replicaof", host, port}, args...)...)
}

// StartSentinel starts a Redis Sentinel that monitors master under name,
// with a quorum of 1 and a down-after of downAfter.
func StartSentinel(t testing.TB, name, master string, downAfter time.Duration) *Server {
	t.Helper()
	host, port, err := net.SplitHostPort(master)
	if err != nil {
		t.Fatalf("redistest: master address %q: %v", master, err)
	}
	conf := fmt.Sprintf("sentinel monitor %s %s %s 1\n"+
		"sentinel down-after-milliseconds %s %d\n"+
		"sentinel failover-timeout %s 10000\n"+
		"sentinel parallel-syncs %s 1\n",
		name, host, port, name, downAfter.Milliseconds(), name, name)
	return start1(t, &conf)
}

func start1(t testing.TB, sentinelConf *string, args ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redistest: redis-server is not installed")
	}
	dir := t.TempDir()
	// A cluster node binds its bus port too: it gets a free one of its
	// own, rather than port + 10000, which may be taken.
	n := 1
	if clusterNode(args) {
		n = 2
	}
	var conf string
	if sentinelConf != nil {
		// A sentinel rewrites its config file, so it needs one of its own.
		conf = filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(conf, []byte(*sentinelConf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd, addr, err := launch(bin, dir, n, func(ports []int) []string {
		argv := []string{"--port", strconv.Itoa(ports[0]), "--bind", "127.0.0.1", "--dir", dir,
			"--loglevel", "warning", "--logfile", filepath.Join(dir, "redis.log")}
		if sentinelConf == nil {
			argv = append(argv, "--save", "", "--appendonly", "no")
		} else {
			argv = append([]string{conf, "--sentinel"}, argv...)
		}
		if n == 2 {
			argv = append(argv, "--cluster-port", strconv.Itoa(ports[1]))
		}
		return append(argv, args...)
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: addr, Dir: dir, cmd: cmd}
	t.Cleanup(s.Stop)
	return s
}

// Stop kills the server and waits for it to exit. It may be called more
// than once.
func (s *Server) Stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// Restart starts the server again, a killed one included, on the same
// port and directory, with the same arguments, and waits until it
// answers.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	cmd := exec.Command(s.cmd.Path, s.cmd.Args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("redistest: restart redis-server: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for ping(s.Addr) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redistest: redis-server on %s did not answer after a restart", s.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StartCluster starts a Redis Cluster of masters masters, each with one
// replica, on free loopback ports, with a node timeout of nodeTimeout,
// and waits until every node reports it healthy and every replica has
// synced. It needs redis-cli.
func StartCluster(t testing.TB, masters int, nodeTimeout time.Duration) []*Server {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redistest: redis-cli is not installed")
	}
	nodes := make([]*Server, 2*masters)
	args := []string{"--cluster", "create"}
	for i := range nodes {
		nodes[i] = StartServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10))
		args = append(args, nodes[i].Addr)
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range nodes {
		for !clusterReady(n.Addr) {
			if time.Now().After(deadline) {
				t.Fatalf("redistest: cluster node %s did not become ready", n.Addr)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nodes
}

// clusterReady reports whether the node at addr sees the cluster as ok
// and, if it is a replica, has synced with its master.
func clusterReady(addr string) bool {
	info, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", portOf(addr), "cluster", "info").Output()
	if err != nil || !containsLine(string(info), "cluster_state:ok") {
		return false
	}
	repl, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", portOf(addr), "info", "replication").Output()
	if err != nil {
		return false
	}
	return containsLine(string(repl), "role:master") || containsLine(string(repl), "master_link_status:up")
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

func containsLine(s, line string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// Signal sends sig to the server's process: SIGSTOP freezes it, SIGCONT
// lets it go on.
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }
