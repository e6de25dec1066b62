package rdb

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Connecting: what runtime.Open checks before it starts the engine, and
// how it names what went wrong, so that an operator reads "cannot reach
// Redis at host:port" or "the server speaks plain Redis, without TLS"
// rather than a context deadline or a step of the engine's start.

// plainProbeAfter is how long a TLS handshake may go unanswered before
// Open asks, on a second connection, whether the server speaks plain
// Redis: one that does reads the handshake as an unfinished command and
// never answers it.
const plainProbeAfter = 300 * time.Millisecond

// ErrUnreachable is wrapped by the error of runtime.Open when no
// connection to Redis could be made. runtime.ErrUnreachable is this
// error, and documents it.
var ErrUnreachable = errors.New("jobgen: cannot reach Redis")

// ErrTLSMismatch is wrapped by the error of runtime.Open for a rediss://
// URL whose server speaks plain Redis, without TLS. runtime.ErrTLSMismatch
// is this error, and documents it.
var ErrTLSMismatch = errors.New("jobgen: TLS handshake with a server that speaks plain Redis")

// CheckTLS checks a client of one server over TLS, as OpenClient makes
// for a rediss:// URL, with a handshake of its own (probeTLS), so that a
// server that speaks plain Redis fails at once with ErrTLSMismatch, not
// at the end of the client's retries. It checks nothing for another
// client.
func CheckTLS(ctx context.Context, c redis.UniversalClient) error {
	if c, ok := c.(*redis.Client); ok && c.Options().TLSConfig != nil {
		opt := c.Options()
		return probeTLS(ctx, opt.Addr, opt.TLSConfig, opt.DialTimeout)
	}
	return nil
}

// probeTLS connects to addr and makes a TLS handshake with conf, within
// timeout, and says what failed: the connection (ErrUnreachable), or a
// handshake with a server that speaks plain Redis (ErrTLSMismatch), or
// the handshake itself.
func probeTLS(ctx context.Context, addr string, conf *tls.Config, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return unreachable(addr, err)
	}
	defer raw.Close()
	c := tls.Client(raw, conf)
	shook := make(chan error, 1)
	go func() { shook <- c.HandshakeContext(ctx) }()
	select {
	case err := <-shook:
		if err == nil {
			return nil
		}
		return handshakeError(ctx, addr, err)
	case <-time.After(plainProbeAfter):
	}
	if speaksPlain(ctx, addr) {
		cancel()
		<-shook
		return tlsMismatch(addr)
	}
	if err := <-shook; err != nil {
		return handshakeError(ctx, addr, err)
	}
	return nil
}

// handshakeError names a failed TLS handshake with addr.
func handshakeError(ctx context.Context, addr string, err error) error {
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) || speaksPlain(context.WithoutCancel(ctx), addr) {
		return tlsMismatch(addr)
	}
	return fmt.Errorf("jobgen: TLS handshake with Redis at %s failed: %w: check that the server has TLS on at that port (tls-port) and that its certificate is valid for the URL's host", addr, err)
}

func tlsMismatch(addr string) error {
	return fmt.Errorf("%w: the Redis at %s answers without TLS: use redis:// rather than rediss://, or connect to the server's TLS port (tls-port)", ErrTLSMismatch, addr)
}

// speaksPlain reports whether the server at addr answers a plain PING
// with a Redis reply (+PONG, or an error such as -NOAUTH), within a
// second.
func speaksPlain(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && len(line) > 1 && (line[0] == '+' || line[0] == '-')
}

// unreachable names a failed connection to addr.
func unreachable(addr string, err error) error {
	hint := "check that Redis runs there and that the URL's host and port are right"
	if errors.Is(err, syscall.ECONNREFUSED) {
		hint = "nothing listens there: start Redis, or fix the URL's host and port"
	}
	return fmt.Errorf("%w at %s: %w: %s", ErrUnreachable, addr, err, hint)
}

// StartError names why the engine could not start on a Redis: a
// connection that could not be made (ErrUnreachable), rather than the
// step of the start that first needed one. Any other err is returned as
// it is.
func StartError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		addr := ""
		if op.Addr != nil {
			addr = op.Addr.String()
		}
		return unreachable(addr, op.Err)
	}
	return err
}
