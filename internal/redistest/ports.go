package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Ports: a server started on a port picked free may still find it taken
// (another process took it between the pick and the bind), and a Redis
// Cluster node also binds a port derived from its own (the bus, port +
// 10000) unless told otherwise. So every port a server binds is picked
// free here, the bus included (--cluster-port), and a start that loses a
// port to another process is made again on new ones (startTries).

// startTries is how many times a server is started on new ports when
// one of its ports was taken before it could bind it.
const startTries = 5

// freePorts returns n distinct loopback ports that nothing listens on,
// none of them 6379: it holds a listener on each until it has them all,
// so no port is returned twice.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		p := l.Addr().(*net.TCPAddr).Port
		if p == 6379 || p+10000 == 6379 || slices.Contains(ports, p) {
			continue
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// freePort returns a loopback port that nothing listens on.
func freePort() (int, error) {
	p, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// clusterNode reports whether args start a Redis Cluster node.
func clusterNode(args []string) bool {
	i := slices.Index(args, "--cluster-enabled")
	return i >= 0 && i+1 < len(args) && args[i+1] == "yes"
}

// errPortTaken is returned by a start whose server found a port taken.
var errPortTaken = errors.New("redistest: a port was taken before redis-server could bind it")

// portTaken reports whether the log in dir says redis-server could not
// bind a port.
func portTaken(dir string) bool {
	b, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
	return strings.Contains(string(b), "Address already in use")
}

// launch starts bin with the arguments argsFor gives for n free ports
// (the first the server's own), with its log at dir/redis.log, and waits
// until it answers on the first. A start whose server finds a port taken
// is made again on new ports, up to startTries times.
func launch(bin, dir string, n int, argsFor func(ports []int) []string) (*exec.Cmd, string, error) {
	var err error
	for range startTries {
		var ports []int
		if ports, err = freePorts(n); err != nil {
			return nil, "", err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		_ = os.Remove(filepath.Join(dir, "redis.log"))
		cmd := exec.Command(bin, argsFor(ports)...)
		if err = cmd.Start(); err != nil {
			return nil, "", fmt.Errorf("redistest: start redis-server: %w", err)
		}
		if err = await(addr, dir); err == nil {
			return cmd, addr, nil
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if !errors.Is(err, errPortTaken) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			return nil, "", fmt.Errorf("%w\n%s", err, log)
		}
	}
	return nil, "", fmt.Errorf("redistest: %d starts of redis-server each found a port taken: %w", startTries, err)
}

// await waits until the server at addr answers, or its log says a port
// was taken (errPortTaken), or 10 s have passed.
func await(addr, dir string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := ping(addr)
		switch {
		case err == nil:
			return nil
		case portTaken(dir):
			return errPortTaken
		case time.Now().After(deadline):
			return fmt.Errorf("redistest: redis-server on %s did not answer: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
