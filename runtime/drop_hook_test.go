package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

var errCrash = errors.New("simulated crash: the call never reached Redis")

// dropScripts is a go-redis hook that swallows the calls of some scripts,
// and only those naming job id if id is set, as if the worker died after
// the handler ran and before the calls reached Redis.
type dropScripts struct {
	shas map[string]bool
	id   string
	mu   sync.Mutex
	n    int
}

func (h *dropScripts) match(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 2 || fmt.Sprint(args[0]) != "evalsha" || !h.shas[fmt.Sprint(args[1])] {
		return false
	}
	if h.id != "" && !carries(args[2:], h.id) {
		return false
	}
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
	return true
}

func carries(args []any, id string) bool {
	for _, a := range args {
		if fmt.Sprint(a) == id {
			return true
		}
	}
	return false
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
