package harness

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a loopback TCP proxy to a Redis server that delays every
// chunk it forwards and resets connections at random: a flaky network.
//
// Each chunk a client sends is held for Latency and then, with
// probability ResetRate, the connection is reset (closed with SO_LINGER
// 0, so both ends get an RST) — half of the time after the chunk went
// through, so Redis ran the command but its reply is lost, half of the
// time before, so Redis never saw it.
type Proxy struct {
	Latency   time.Duration
	ResetRate float64

	target string
	l      net.Listener
	conns  atomic.Int64
	resets atomic.Int64
	wg     sync.WaitGroup
	mu     sync.Mutex
	open   map[net.Conn]bool
	armed  *trap
}

// trap is a one-shot fault: see Arm.
type trap struct {
	match  []byte
	before func()
}

// Arm makes the proxy lose the reply to the next chunk a client sends
// that contains match: the chunk goes to Redis, which runs it; the proxy
// drops the reply, calls before (if not nil), and resets the connection.
// A client that retries then sends the command a second time.
func (p *Proxy) Arm(match []byte, before func()) {
	p.mu.Lock()
	p.armed = &trap{match: match, before: before}
	p.mu.Unlock()
}

// sprung returns the armed trap if chunk springs it, disarming it.
func (p *Proxy) sprung(chunk []byte) *trap {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed == nil || !bytes.Contains(chunk, p.armed.match) {
		return nil
	}
	t := p.armed
	p.armed = nil
	return t
}

// StartProxy starts a proxy to target, closed when the test ends.
func StartProxy(t testing.TB, target string, latency time.Duration, resetRate float64) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Latency: latency, ResetRate: resetRate, target: target, l: l, open: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// URL is the redis:// URL of the proxy.
func (p *Proxy) URL() string { return "redis://" + p.Addr() + "/0" }

// Conns is how many connections the proxy has accepted.
func (p *Proxy) Conns() int64 { return p.conns.Load() }

// Resets is how many connections the proxy has reset.
func (p *Proxy) Resets() int64 { return p.resets.Load() }

// Close stops the proxy and drops every connection.
func (p *Proxy) Close() {
	p.l.Close()
	p.mu.Lock()
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.open[c] = true
	} else {
		delete(p.open, c)
	}
	return true
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.conns.Add(1)
		p.track(c, true)
		p.track(s, true)
		p.wg.Add(1)
		go p.pipe(c, s)
	}
}

func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// pipe forwards between client c and server s until either side ends.
func (p *Proxy) pipe(c, s net.Conn) {
	defer p.wg.Done()
	var once sync.Once
	kill := func(rst bool) {
		once.Do(func() {
			if rst {
				p.resets.Add(1)
				reset(c)
				reset(s)
			} else {
				c.Close()
				s.Close()
			}
			p.track(c, false)
			p.track(s, false)
		})
	}
	var dying atomic.Bool // replies are dropped from now on
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 && !dying.Load() {
				if _, werr := c.Write(buf[:n]); werr != nil {
					kill(true)
					return
				}
			}
			if err != nil {
				kill(!errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed))
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			time.Sleep(p.Latency)
			if t := p.sprung(buf[:n]); t != nil {
				dying.Store(true)
				_, _ = s.Write(buf[:n])
				time.Sleep(5 * time.Millisecond)
				if t.before != nil {
					t.before()
				}
				kill(true)
				break
			}
			if rand.Float64() < p.ResetRate {
				if rand.IntN(2) == 0 {
					// Redis runs the command; its reply is lost.
					dying.Store(true)
					_, _ = s.Write(buf[:n])
					time.Sleep(5 * time.Millisecond)
				}
				kill(true)
				break
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				kill(true)
				break
			}
		}
		if err != nil {
			kill(false)
			break
		}
	}
	<-done
}
