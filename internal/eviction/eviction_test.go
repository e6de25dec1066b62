package eviction

import (
	"context"
	"errors"
	"testing"

	"github.com/jobgen/jobgen/internal/rdb"
)

type policies []rdb.Policy

func (p policies) Policies(context.Context) []rdb.Policy { return p }

func TestCheck(t *testing.T) {
	ctx := context.Background()
	lru := policies{{Addr: "a", Policy: "noeviction"}, {Addr: "b", Policy: "allkeys-lru"}}
	if err := Check(ctx, lru, false, nil); !errors.Is(err, ErrEvicting) {
		t.Fatalf("allkeys-lru: Check = %v; want ErrEvicting", err)
	}
	if err := Check(ctx, lru, true, nil); err != nil {
		t.Fatalf("allowed: Check = %v", err)
	}
	refused := policies{{Addr: "a", Refused: errors.New("unknown command")}}
	if err := Check(ctx, refused, false, nil); err != nil {
		t.Fatalf("CONFIG refused: Check = %v; want nil", err)
	}
}
