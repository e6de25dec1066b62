package redistest

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// A cluster node binds no port derived from its own: with port + 10000
// (Redis's default bus port) taken by another process, it still starts.
func TestClusterNodeBindsNoDerivedPort(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli is not installed")
	}
	s := StartServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	port, err := strconv.Atoi(portOf(s.Addr))
	if err != nil {
		t.Fatal(err)
	}
	if port+10000 <= 65535 {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			t.Fatalf("take port + 10000: %v", err)
		}
		defer l.Close()
	} // else: a derived bus port past 65535 fails the start by itself
	s.Restart(t)
	out, err := exec.Command("redis-cli", "-p", portOf(s.Addr), "cluster", "info").Output()
	if err != nil || !strings.Contains(string(out), "cluster_enabled:1") && !strings.Contains(string(out), "cluster_state:") {
		t.Fatalf("cluster info: %v: %s", err, out)
	}
}

// freePorts gives distinct ports.
func TestFreePortsAreDistinct(t *testing.T) {
	ps, err := freePorts(50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if seen[p] || p == 6379 {
			t.Fatalf("port %d twice or 6379: %v", p, ps)
		}
		seen[p] = true
	}
}
