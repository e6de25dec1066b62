package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime"
)

var errCrash = errors.New("simulated crash: the call never reached Redis")

// dropScripts is a go-redis hook that swallows the calls of some scripts,
// as if the worker died after the handler ran and before the calls
// reached Redis.
type dropScripts struct {
	shas  map[string]bool
	until time.Time // if set, it swallows nothing from then on
	most  int       // if set, it swallows no more calls than this
	mu    sync.Mutex
	n     int
}

func (h *dropScripts) match(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 2 || fmt.Sprint(args[0]) != "evalsha" || !h.shas[fmt.Sprint(args[1])] {
		return false
	}
	if !h.until.IsZero() && !time.Now().Before(h.until) {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.most > 0 && h.n >= h.most {
		return false
	}
	h.n++
	return true
}

// dropped counts the calls swallowed so far.
func (h *dropScripts) dropped() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func (h *dropScripts) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *dropScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.match(cmd) {
			cmd.SetErr(errCrash)
			return errCrash
		}
		return next(ctx, cmd)
	}
}

func (h *dropScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		keep := cmds[:0:0]
		for _, c := range cmds {
			if h.match(c) {
				c.SetErr(errCrash)
			} else {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return errCrash
		}
		return next(ctx, keep)
	}
}

// loseAck, through beforeCalls(spoil), loses every ack of job id, and
// only that: in an ack call it replaces the job's reservation token with
// one that is stale, so the call acks the other jobs it carries and
// reports the job's lease as lost. The job stays reserved, as if its
// worker had died before acking it. (Swallowing the whole call, as
// dropScripts does, would lose with it the acks the worker sent in the
// same call.)
type loseAck struct {
	id string
	mu sync.Mutex
	n  int
}

func (h *loseAck) spoil(cmds ...redis.Cmder) {
	for _, cmd := range cmds {
		h.spoilOne(cmd)
	}
}

func (h *loseAck) spoilOne(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 3 || !runsScript(cmd, runtime.ScriptSHA("ack")) {
		return
	}
	nkeys, err := strconv.Atoi(fmt.Sprint(args[2]))
	if err != nil {
		return
	}
	for i := 3 + nkeys; i+1 < len(args); i += 2 { // pairs: job ID, token
		if fmt.Sprint(args[i]) == h.id {
			args[i+1] = "lost"
			h.mu.Lock()
			h.n++
			h.mu.Unlock()
		}
	}
}

// lost counts the acks of the job lost so far.
func (h *loseAck) lost() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// runsScript says whether cmd is an EVALSHA of the script with this SHA.
func runsScript(cmd redis.Cmder, sha string) bool {
	args := cmd.Args()
	return len(args) > 1 && fmt.Sprint(args[0]) == "evalsha" && fmt.Sprint(args[1]) == sha
}

// beforeCalls is a go-redis hook that calls fn with each command, or with
// each pipeline's commands, before they are sent.
type beforeCalls func(cmds ...redis.Cmder)

func (f beforeCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f beforeCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		f(cmd)
		return next(ctx, cmd)
	}
}

func (f beforeCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		f(cmds...)
		return next(ctx, cmds)
	}
}
