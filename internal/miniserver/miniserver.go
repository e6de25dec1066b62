// Package miniserver runs the in-process Redis-protocol server behind
// embedded:// URLs (miniredis), made to run jobgen's Lua scripts as Redis
// 7 does. Programs link it only through runtime/embedded.
package miniserver

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"
)

// servers by name, shared by the clients of one process.
var servers = struct {
	sync.Mutex
	byName map[string]*shared
}{byName: map[string]*shared{}}

type shared struct {
	srv  *miniredis.Miniredis
	refs int
	stop chan struct{} // ends expire
}

// Open returns a client of the server named name, starting it if no
// client of this process has it open, and a function that closes the
// client. The server stops when its last client is closed.
func Open(name string) (redis.UniversalClient, func() error, error) {
	servers.Lock()
	defer servers.Unlock()
	s := servers.byName[name]
	if s == nil {
		// Run listens on a loopback TCP port. The in-memory transport is
		// not used: it deadlocks on pipelines over about 4 KB.
		srv, err := miniredis.Run()
		if err != nil {
			return nil, nil, fmt.Errorf("start embedded server: %w", err)
		}
		acceptShebangs(srv.Server())
		s = &shared{srv: srv, stop: make(chan struct{})}
		servers.byName[name] = s
		go expire(srv, s.stop)
	}
	s.refs++
	// The server is in this process and runs Lua far slower than Redis, so
	// a long pipeline of scripts can take seconds: the network timeouts
	// of a remote server do not apply.
	c := redis.NewClient(&redis.Options{Addr: s.srv.Addr(), ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	var once sync.Once
	closer := func() error {
		err := c.Close()
		once.Do(func() {
			servers.Lock()
			defer servers.Unlock()
			if s.refs--; s.refs == 0 {
				close(s.stop)
				s.srv.Close()
				delete(servers.byName, name)
			}
		})
		return err
	}
	return c, closer, nil
}

// expire moves the server's key lifetimes on with the wall clock, which
// miniredis leaves to its caller: without it, a key set with PX (a
// unique lock, a chain marker) would never expire.
func expire(srv *miniredis.Miniredis, stop <-chan struct{}) {
	const tick = 20 * time.Millisecond
	t := time.NewTicker(tick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			srv.FastForward(now.Sub(last))
			last = now
		}
	}
}

// acceptShebangs makes the server take scripts that start with a Redis 7
// shebang line ("#!lua flags=allow-oom"), which its Lua (gopher-lua)
// cannot parse. EVAL and SCRIPT LOAD of such a text run the text with
// that line emptied, so that line numbers in errors agree; an EVALSHA of
// the whole text's SHA runs the emptied text. The flags themselves mean
// nothing there (no maxmemory, no replicas, no cluster). It works on the
// server, not in the client, so that every client of the server gets the
// same scripts as Redis, also one that reaches it by its address. SCRIPT
// LOAD answers the SHA of the text it ran.
//
// It also answers CONFIG GET maxmemory-policy, which miniredis does not
// know, with noeviction.
func acceptShebangs(srv *server.Server) {
	var mu sync.Mutex
	ran := map[string]string{} // SHA of a text with a shebang -> SHA of the text run
	srv.SetPreHook(func(c *server.Peer, cmd string, args ...string) bool {
		text := -1 // index of the script text in args
		switch {
		case cmd == "CONFIG" && len(args) == 2 && strings.EqualFold(args[0], "GET") && strings.EqualFold(args[1], "maxmemory-policy"):
			// An in-process server never evicts: say so, as Redis
			// does, for the engine's check of the policy.
			c.WriteMapLen(1)
			c.WriteBulk("maxmemory-policy")
			c.WriteBulk("noeviction")
			return true
		case cmd == "EVAL" || cmd == "EVAL_RO":
			text = 0
		case cmd == "SCRIPT" && len(args) == 2 && strings.EqualFold(args[0], "LOAD"):
			text = 1
		case (cmd == "EVALSHA" || cmd == "EVALSHA_RO") && len(args) > 0:
			mu.Lock()
			sha, ok := ran[strings.ToLower(args[0])]
			mu.Unlock()
			if !ok {
				return false
			}
			srv.Dispatch(c, append([]string{cmd, sha}, args[1:]...))
			return true
		}
		if text < 0 || len(args) <= text || !strings.HasPrefix(args[text], "#!") {
			return false
		}
		bare := withoutShebang(args[text])
		mu.Lock()
		ran[sha1Hex(args[text])] = sha1Hex(bare)
		mu.Unlock()
		again := append([]string{cmd}, args...)
		again[1+text] = bare
		srv.Dispatch(c, again)
		return true
	})
}

// withoutShebang returns src with the text of a leading "#!" line
// removed. Its newline stays, so the lines after it keep their numbers.
func withoutShebang(src string) string {
	if !strings.HasPrefix(src, "#!") {
		return src
	}
	if i := strings.IndexByte(src, '\n'); i >= 0 {
		return src[i:]
	}
	return ""
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
