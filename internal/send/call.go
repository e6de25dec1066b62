package send

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime/lua"
)

// Call is one script invocation.
type Call struct {
	Script *lua.Script
	Keys   []string
	Args   []any
}

// Run runs c by SHA, and by source if the server has lost the script
// (after SCRIPT FLUSH or a failover), which also reloads it.
func (c Call) Run(ctx context.Context, rdb redis.Scripter) *redis.Cmd {
	cmd := rdb.EvalSha(ctx, c.Script.SHA, c.Keys, c.Args...)
	if IsNoScript(cmd.Err()) {
		cmd = rdb.Eval(ctx, c.Script.Src, c.Keys, c.Args...)
	}
	return cmd
}

// All runs calls in one pipeline, with the NOSCRIPT recovery of Again.
// The result has one command per call; the error is the first call's
// error, if any, for callers that only need to know whether all went
// well. redis.Nil is no error, except for a single call, whose error is
// its command's.
func All(ctx context.Context, rdb redis.Cmdable, calls []Call) ([]*redis.Cmd, error) {
	if len(calls) == 1 {
		cmd := calls[0].Run(ctx, rdb)
		return []*redis.Cmd{cmd}, cmd.Err()
	}
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		Pipe(ctx, p, calls, cmds)
		return nil
	})
	Again(ctx, rdb, calls, cmds, nil)
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			return cmds, err
		}
	}
	return cmds, nil
}

// Pipe adds calls to p by SHA, their commands going into cmds. The
// caller sends p, then calls Again.
func Pipe(ctx context.Context, p redis.Pipeliner, calls []Call, cmds []*redis.Cmd) {
	for i, c := range calls {
		cmds[i] = p.EvalSha(ctx, c.Script.SHA, c.Keys, c.Args...)
	}
}

// Again is the NOSCRIPT recovery of pipelined calls: the calls whose
// command in cmds failed with NOSCRIPT did nothing, so it sends them
// again by source, which also loads them, in a second pipeline, and puts
// their new commands in cmds. with, if not nil, adds commands after them
// to that pipeline (a WAIT), given the indexes sent again. It returns
// those indexes.
func Again(ctx context.Context, rdb redis.Cmdable, calls []Call, cmds []*redis.Cmd, with func(p redis.Pipeliner, again []int)) []int {
	var again []int
	for i, cmd := range cmds {
		if IsNoScript(cmd.Err()) {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return nil
	}
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range again {
			c := calls[i]
			cmds[i] = p.Eval(ctx, c.Script.Src, c.Keys, c.Args...)
		}
		if with != nil {
			with(p, again)
		}
		return nil
	})
	return again
}

// Load loads every script into the server (into every master of a
// cluster), so the first EVALSHA of each finds it.
func Load(ctx context.Context, rdb redis.UniversalClient) error {
	for _, s := range lua.All() {
		if err := rdb.ScriptLoad(ctx, s.Src).Err(); err != nil {
			return fmt.Errorf("load script %s: %w", s.Name, err)
		}
	}
	return nil
}

// IsNoScript reports whether err is Redis's NOSCRIPT: the call did
// nothing.
func IsNoScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

// IsReplyError reports whether err is an error reply from Redis, rather
// than a failure to get a reply.
func IsReplyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && err != redis.Nil
}

// Errs returns the error of each command; redis.Nil is no error.
func Errs(cmds []*redis.Cmd) []error {
	errs := make([]error, len(cmds))
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			errs[i] = err
		}
	}
	return errs
}
