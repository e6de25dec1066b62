package runtime_test

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// replyDropper is a TCP proxy between a client and Redis that, while
// armed, forwards each command holding marker (a script's SHA) to Redis
// and then closes the connection instead of forwarding its reply: Redis
// has run the command, and the client never learns what it did.
type replyDropper struct {
	ln      net.Listener
	target  string
	marker  []byte
	armed   atomic.Bool
	dropped atomic.Int64
	wg      sync.WaitGroup
}

func newReplyDropper(t *testing.T, target, marker string) *replyDropper {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &replyDropper{ln: ln, target: target, marker: []byte(marker)}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	return p
}

func (p *replyDropper) addr() string { return p.ln.Addr().String() }

func (p *replyDropper) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		var drop atomic.Bool
		p.wg.Add(2)
		go func() { // client -> Redis
			defer p.wg.Done()
			defer func() { _ = s.Close() }()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if p.armed.Load() && bytes.Contains(buf[:n], p.marker) {
						drop.Store(true)
					}
					if _, werr := s.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // Redis -> client
			defer p.wg.Done()
			defer func() { _ = c.Close() }()
			buf := make([]byte, 64<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 && drop.Load() {
					// The reply of the marked command: Redis ran it.
					p.dropped.Add(1)
					_ = s.Close()
					return
				}
				if n > 0 {
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					if err != io.EOF {
						_ = s.Close()
					}
					return
				}
			}
		}()
	}
}
