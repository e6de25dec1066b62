package runtime

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// script is one Lua file from lua/, run by SHA with NOSCRIPT recovery.
type script struct {
	name string
	src  string
	sha  string
}

func mustScript(name string) *script {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("jobgen: embedded script %s: %v", name, err))
	}
	return &script{name: name, src: string(b), sha: sha1Hex(string(b))}
}

var (
	scriptPush       = mustScript("push")
	scriptLater      = mustScript("later")
	scriptMigrate    = mustScript("migrate")
	scriptReserve    = mustScript("reserve")
	scriptExtend     = mustScript("extend")
	scriptAck        = mustScript("ack")
	scriptRelease    = mustScript("release")
	scriptFail       = mustScript("fail")
	scriptRetry      = mustScript("retry")
	scriptForget     = mustScript("forget")
	scriptPrune      = mustScript("prune")
	scriptClear      = mustScript("clear")
	scriptSizes      = mustScript("sizes")
	scriptUnreserve  = mustScript("unreserve")
	scriptHooksDue   = mustScript("hooks_due")
	scriptHooksClaim = mustScript("hooks_claim")

	// Chains, batches, unique jobs and job middleware.
	scriptChainPush   = mustScript("chain_push")
	scriptLock        = mustScript("lock")
	scriptUnlock      = mustScript("unlock")
	scriptBatchAdd    = mustScript("batch_add")
	scriptBatchDone   = mustScript("batch_done")
	scriptBatchFail   = mustScript("batch_fail")
	scriptBatchRan    = mustScript("batch_ran")
	scriptBatchCancel = mustScript("batch_cancel")
	scriptRateLimit   = mustScript("rate_limit")
	scriptHits        = mustScript("hits")

	// Schedules.
	scriptScheduleTick = mustScript("schedule_tick")

	allScripts = []*script{
		scriptPush, scriptLater, scriptMigrate, scriptReserve, scriptExtend, scriptAck,
		scriptRelease, scriptFail, scriptRetry, scriptForget, scriptPrune, scriptClear,
		scriptChainPush, scriptLock, scriptUnlock,
		scriptBatchAdd, scriptBatchDone, scriptBatchFail, scriptBatchRan, scriptBatchCancel,
		scriptRateLimit, scriptHits, scriptHooksDue, scriptHooksClaim,
		scriptScheduleTick,
	}
)

// acceptShebangs makes the embedded server take scripts that start with a
// Redis 7 shebang line ("#!lua flags=allow-oom"), which its Lua
// (gopher-lua) cannot parse. EVAL and SCRIPT LOAD of such a text run the
// text with that line emptied, so that line numbers in errors agree; an
// EVALSHA of the whole text's SHA runs the emptied text. The flags
// themselves mean nothing there (no maxmemory, no replicas, no cluster).
// It works on the server, not in the client, so that every client of the
// server gets the same scripts as Redis, also one that reaches it by its
// address. SCRIPT LOAD answers the SHA of the text it ran.
func acceptShebangs(srv *server.Server) {
	var mu sync.Mutex
	ran := map[string]string{} // SHA of a text with a shebang -> SHA of the text run
	srv.SetPreHook(func(c *server.Peer, cmd string, args ...string) bool {
		text := -1 // index of the script text in args
		switch {
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

// loadScripts loads every script into the server (into every master of a
// cluster), so the first EVALSHA of each finds it.
func loadScripts(ctx context.Context, c redis.UniversalClient) error {
	for _, s := range allScripts {
		if err := c.ScriptLoad(ctx, s.src).Err(); err != nil {
			return fmt.Errorf("load script %s: %w", s.name, err)
		}
	}
	return nil
}

// call is one script invocation.
type call struct {
	s    *script
	keys []string
	args []any
}

func isNoScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

// run runs one call by SHA, and by source if the server has lost the
// script (after SCRIPT FLUSH or a failover), which also reloads it.
func (c call) run(ctx context.Context, rdb redis.Scripter) *redis.Cmd {
	cmd := rdb.EvalSha(ctx, c.s.sha, c.keys, c.args...)
	if isNoScript(cmd.Err()) {
		cmd = rdb.Eval(ctx, c.s.src, c.keys, c.args...)
	}
	return cmd
}

// runAll runs calls in one pipeline. Calls that fail with NOSCRIPT did
// nothing, so they are sent again by source in a second pipeline; that is
// the recovery go-redis's Script.Run does not do inside a pipeline. The
// result has one command per call; the error is the first call's error,
// if any, for callers that only need to know whether all went well.
func runAll(ctx context.Context, rdb redis.UniversalClient, calls []call) ([]*redis.Cmd, error) {
	if len(calls) == 1 {
		cmd := calls[0].run(ctx, rdb)
		return []*redis.Cmd{cmd}, cmd.Err()
	}
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range calls {
			cmds[i] = p.EvalSha(ctx, c.s.sha, c.keys, c.args...)
		}
		return nil
	})
	var again []int
	for i, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range again {
				c := calls[i]
				cmds[i] = p.Eval(ctx, c.s.src, c.keys, c.args...)
			}
			return nil
		})
	}
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			return cmds, err
		}
	}
	return cmds, nil
}
