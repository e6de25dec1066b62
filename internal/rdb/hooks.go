package rdb

import (
	"context"
	"strings"

	"github.com/jobgen/jobgen/runtime/lua"
)

// The hooks set of a queue: the failed jobs whose hooks are due, each by
// its ID and the token of the reservation it failed under, scored by
// when the entry was recorded or last renewed.

var (
	scriptHooksDue   = lua.Get("hooks_due")
	scriptHooksClaim = lua.Get("hooks_claim")
)

// Hook names one entry of a hooks set: a job of Queue failed under Token.
type Hook struct {
	Queue, ID, Token string
}

// member is h's member of the hooks set. Tokens hold no space.
func (h Hook) member() string { return h.ID + " " + h.Token }

// HooksDue records h's hooks as due.
func (s *Store) HooksDue(ctx context.Context, h Hook) error {
	return Call{Script: scriptHooksDue, Keys: []string{s.keys.Queue(h.Queue).Hooks}, Args: []any{h.member(), ""}}.Run(ctx, s.c).Err()
}

// RenewHooks renews the entries of hs that still exist, in one pipeline.
func (s *Store) RenewHooks(ctx context.Context, hs []Hook) error {
	calls := make([]Call, len(hs))
	for i, h := range hs {
		calls[i] = Call{Script: scriptHooksDue, Keys: []string{s.keys.Queue(h.Queue).Hooks}, Args: []any{h.member(), "XX"}}
	}
	_, err := s.Run(ctx, calls)
	return err
}

// ClaimHooks claims up to limit entries of queue's hooks set recorded at
// least age ms ago.
func (s *Store) ClaimHooks(ctx context.Context, queue string, age int64, limit int) ([]Hook, error) {
	ms, err := Call{Script: scriptHooksClaim, Keys: []string{s.keys.Queue(queue).Hooks}, Args: []any{age, limit}}.Run(ctx, s.c).StringSlice()
	if err != nil {
		return nil, err
	}
	hs := make([]Hook, 0, len(ms))
	for _, m := range ms {
		i := strings.LastIndexByte(m, ' ')
		if i < 0 {
			continue
		}
		hs = append(hs, Hook{Queue: queue, ID: m[:i], Token: m[i+1:]})
	}
	return hs, nil
}

// HooksDone removes h's entry.
func (s *Store) HooksDone(ctx context.Context, h Hook) error {
	return s.c.ZRem(ctx, s.keys.Queue(h.Queue).Hooks, h.member()).Err()
}
