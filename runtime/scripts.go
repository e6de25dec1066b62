package runtime

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/internal/lua"
)

// script is one Lua script of internal/lua, run by SHA with NOSCRIPT
// recovery.
type script = lua.Script

// allScripts is every script, in name order, so that none is left out of
// loadScripts or of the tests that check every script.
var allScripts = lua.All()

// mustScript returns the script name.
func mustScript(name string) *script { return lua.Get(name) }

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
)

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// loadScripts loads every script into the server (into every master of a
// cluster), so the first EVALSHA of each finds it.
func loadScripts(ctx context.Context, c redis.UniversalClient) error {
	for _, s := range allScripts {
		if err := c.ScriptLoad(ctx, s.Src).Err(); err != nil {
			return fmt.Errorf("load script %s: %w", s.Name, err)
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

// evalAll adds calls to p by SHA, their commands going into cmds.
func evalAll(ctx context.Context, p redis.Pipeliner, calls []call, cmds []*redis.Cmd) {
	for i, c := range calls {
		cmds[i] = p.EvalSha(ctx, c.s.SHA, c.keys, c.args...)
	}
}

// sendAgain is the one NOSCRIPT recovery of pipelined calls, which
// go-redis's Script.Run does not do inside a pipeline: the calls whose
// command in cmds failed with NOSCRIPT did nothing, so it sends them
// again by source, which also loads them, in a second pipeline, and puts
// their new commands in cmds. with, if not nil, adds commands after them
// to that pipeline (a WAIT), given the indexes sent again. It returns
// those indexes.
func sendAgain(ctx context.Context, rdb redis.Cmdable, calls []call, cmds []*redis.Cmd, with func(p redis.Pipeliner, again []int)) []int {
	var again []int
	for i, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return nil
	}
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range again {
			c := calls[i]
			cmds[i] = p.Eval(ctx, c.s.Src, c.keys, c.args...)
		}
		if with != nil {
			with(p, again)
		}
		return nil
	})
	return again
}

// run runs one call by SHA, and by source if the server has lost the
// script (after SCRIPT FLUSH or a failover), which also reloads it.
func (c call) run(ctx context.Context, rdb redis.Scripter) *redis.Cmd {
	cmd := rdb.EvalSha(ctx, c.s.SHA, c.keys, c.args...)
	if isNoScript(cmd.Err()) {
		cmd = rdb.Eval(ctx, c.s.Src, c.keys, c.args...)
	}
	return cmd
}

// runAll runs calls in one pipeline, with the NOSCRIPT recovery of
// sendAgain. The result has one command per call; the error is the
// first call's error, if any, for callers that only need to know whether
// all went well.
func runAll(ctx context.Context, rdb redis.UniversalClient, calls []call) ([]*redis.Cmd, error) {
	if len(calls) == 1 {
		cmd := calls[0].run(ctx, rdb)
		return []*redis.Cmd{cmd}, cmd.Err()
	}
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		evalAll(ctx, p, calls, cmds)
		return nil
	})
	sendAgain(ctx, rdb, calls, cmds, nil)
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			return cmds, err
		}
	}
	return cmds, nil
}
