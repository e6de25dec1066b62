package runtime

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime/lua"
)

// The scripts internal/rdb calls, which these tests call directly.
var (
	scriptMigrate      = mustScript("migrate")
	scriptReserve      = mustScript("reserve")
	scriptStart        = mustScript("start")
	scriptExtend       = mustScript("extend")
	scriptAck          = mustScript("ack")
	scriptFinish       = mustScript("finish")
	scriptRelease      = mustScript("release")
	scriptUnreserve    = mustScript("unreserve")
	scriptFail         = mustScript("fail")
	scriptFailedRecord = mustScript("failed_record")
	scriptRetry        = mustScript("retry")
	scriptForget       = mustScript("forget")
	scriptPrune        = mustScript("prune")
	scriptClear        = mustScript("clear")
	scriptSizes        = mustScript("sizes")
	scriptCancel       = mustScript("cancel")
	scriptProgress     = mustScript("progress")
	scriptHooksDue     = mustScript("hooks_due")
	scriptHooksClaim   = mustScript("hooks_claim")
	scriptBatchDone    = mustScript("batch_done")
	scriptBatchFail    = mustScript("batch_fail")
	scriptBatchRan     = mustScript("batch_ran")
	scriptBatchCancel  = mustScript("batch_cancel")
)

// failCase is one call of a script that writes: the type of each of its
// keys, the commands that fill them so that the call writes, and its
// arguments. A key of type "" is one the call may find of any type
// (deleted or replaced whatever it holds, or not touched on this path).
type failCase struct {
	name  string
	s     *script
	kinds []string
	setup [][]any // commands, with "K1".."Kn" standing for the keys
	args  []any
	// bad are further corruptions: commands that spoil a value the call
	// reads, and what its error says.
	bad []badValue
}

type badValue struct {
	cmds    [][]any
	wantErr string
}

// failCases covers every script that writes; sizes and laravel_sizes
// only read.
var failCases = []failCase{
	{name: "push one", s: scriptPush, kinds: []string{"hash", "list", "", "hash", "list"},
		args: []any{60000, "nonce", 1, 2, 0, "j1", "p1"}},
	{name: "push two", s: scriptPush, kinds: []string{"hash", "list", "", "hash", "list"},
		args: []any{60000, "nonce", 2, 2, 0, "j1", "p1", "j2", "p2"}},
	{name: "start", s: scriptStart, kinds: []string{"zset", "hash"},
		setup: [][]any{{"ZADD", "K1", int64(1) << 50, "j1"}, {"HSET", "K2", "j1", "0:0:htok"}},
		args:  []any{"j1", "tok"}},
	{name: "outbox_push", s: scriptOutboxPush, kinds: []string{"zset", "list", "zset", "hash", "list"},
		args: []any{int64(1) << 50, 2, "m1", "m2", 2, 4, 0, "j1", "p1", 0, "", "j2", "p2", 5000, ""}},
	{name: "outbox_push grouped", s: scriptOutboxPush, kinds: []string{"zset", "list", "zset", "hash", "list", "zset", "hash", "zset", "list", "set", "string", "zset"},
		args: []any{int64(1) << 50, 2, "m1", "m2", 2, 4, 0, "j1", "p1", 0, "2:A", "j2", "p2", 5000, "0:B"}},
	{name: "outbox_release", s: lua.Get("outbox_release"), kinds: []string{"zset"},
		setup: [][]any{{"ZADD", "K1", 1e15, "m1"}},
		args:  []any{60000, "m1"}},
	{name: "queue_hold", s: lua.Get("queue_hold"), kinds: []string{"hash", "list"}, args: []any{60000}},
	{name: "queue_hold end", s: lua.Get("queue_hold"), kinds: []string{"hash", "list"},
		setup: [][]any{{"HSET", "K1", "hold", int64(1) << 50}}, args: []any{0}},
	{name: "push later", s: scriptPush, kinds: []string{"hash", "list", "zset", "hash", "list"},
		args: []any{60000, "nonce", 2, 2, 1000, "j1", "p1", "j2", "p2"}},
	{name: "debounce new", s: scriptDebounce, kinds: []string{"hash", "list", "zset", "hash", "list"},
		args: []any{1000, 10000, "0", 1, 4, 0, "j1", "p1", 1000, ""}},
	{name: "debounce replace", s: scriptDebounce, kinds: []string{"hash", "list", "zset", "hash", "list"},
		setup: [][]any{{"ZADD", "K3", int64(1) << 50, "j0"}, {"HSET", "K4", "j0", "p0"}, {"HSET", "K1", "id", "j0", "first", int64(1) << 40}},
		args:  []any{1000, 10000, "0", 1, 4, 0, "j1", "p1", 1000, ""}},
	{name: "debounce grouped", s: scriptDebounce, kinds: []string{"hash", "list", "zset", "hash", "list", "zset", "hash", "zset", "list", "set", "string", "zset"},
		args: []any{1000, 10000, "1", 1, 4, 0, "j1", "p1", 1000, "2:A"}},
	{name: "migrate", s: scriptMigrate, kinds: []string{"list", "zset", "zset", "hash", "list"},
		setup: [][]any{{"ZADD", "K2", 1, "d1"}, {"ZADD", "K3", 1, "r1", 1, "r2"}, {"HSET", "K4", "r1", "1:0:tok", "r2", "1:0:tok"}},
		args:  []any{1000}},
	{name: "reserve", s: scriptReserve, kinds: []string{"list", "zset", "hash", "hash", "list", "", "hash", "zset", "hash"},
		setup: [][]any{{"RPUSH", "K1", "j1", "j2"}, {"HSET", "K3", "j1", "p1", "j2", "p2"}, {"HSET", "K4", "j1", "1:0:"}},
		args:  []any{1, 60000, "tok", 60000, 1000}},
	// With jobs due, which it moves before it reserves: every key is
	// checked before the first move.
	{name: "reserve after migrating", s: scriptReserve, kinds: []string{"list", "zset", "hash", "hash", "list", "", "hash", "zset", "hash"},
		setup: [][]any{{"ZADD", "K8", 1, "d1"}, {"ZADD", "K2", 1, "r1"}, {"HSET", "K3", "d1", "p1", "r1", "p2"}, {"HSET", "K4", "r1", "1:0:old"}},
		args:  []any{1, 60000, "tok", 60000, 1000}},
	// A queue with flow limits (flow_limit.go): one job of two fits, the
	// limit holds the call back, and the rate counts the start.
	{name: "reserve with limits", s: scriptReserve, kinds: []string{"list", "zset", "hash", "hash", "list", "", "hash", "zset", "hash"},
		setup: [][]any{{"RPUSH", "K1", "j1", "j2"}, {"HSET", "K3", "j1", "p1", "j2", "p2"}, {"HSET", "K9", "limit", 1, "rate", 5, "rate_ms", 60000}},
		args:  []any{2, 60000, "tok", 60000, 1000},
		bad: []badValue{
			{[][]any{{"HSET", "K9", "limit", "five"}}, `field limit of K9 holds "five", not a count`},
			{[][]any{{"HSET", "K9", "used", "-1"}}, `field used of K9 holds "-1", not a count`},
			{[][]any{{"HDEL", "K9", "rate_ms"}}, `K9 has a rate with no rate_ms`},
		}},
	{name: "extend", s: scriptExtend, kinds: []string{"zset", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "1:0:tok"}},
		args:  []any{60000, "j1", "tok"}},
	// A pair whose job was cancelled: its state is gone, the failed set
	// holds it, and the failed set's type is checked before the ZADD.
	{name: "extend with a cancelled job", s: scriptExtend, kinds: []string{"zset", "hash", "zset"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "1:0:tok"}, {"ZADD", "K3", 1, "j2"}},
		args:  []any{60000, "j1", "tok", "j2", "tok2"}},
	{name: "cancel ready", s: scriptCancel, kinds: []string{"list", "zset", "zset", "hash", "hash", "zset", "hash", "hash", "zset", "hash", "hash", "hash", "hash"},
		setup: [][]any{{"RPUSH", "K1", "j0", "j1"}, {"HSET", "K5", "j1", "p1"}},
		args:  []any{10, 0, "j1", 0, "info", "ctok"}},
	{name: "cancel delayed", s: scriptCancel, kinds: []string{"list", "zset", "zset", "hash", "hash", "zset", "hash", "hash", "zset", "hash", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K2", 1, "j1"}, {"HSET", "K4", "j1", "2:1:"}, {"HSET", "K5", "j1", "p1"}, {"HSET", "K10", "j1", "1 1 boom"}},
		args:  []any{10, 0, "j1", 2, "info", "ctok"}},
	{name: "cancel running", s: scriptCancel, kinds: []string{"list", "zset", "zset", "hash", "hash", "zset", "hash", "hash", "zset", "hash", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K3", 1, "j1"}, {"HSET", "K4", "j1", "1:0:tok"}, {"HSET", "K5", "j1", "p1"}},
		args:  []any{10, 0, "j1", 1, "info", "ctok"}},
	{name: "cancel running grouped", s: scriptCancel, kinds: []string{"list", "zset", "zset", "hash", "hash", "zset", "hash", "hash", "zset", "hash", "hash", "hash", "hash", "zset", "list", "set", "string", "zset", "list", "hash"},
		setup: append(groupedSetup("K3", "K4", "K13", "K14", "K18"), []any{"HSET", "K5", "j1", "p1"}),
		args:  []any{10, 0, "j1", 1, "info", "ctok"}},
	{name: "ack", s: scriptAck, kinds: []string{"zset", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "1:0:tok"}, {"HSET", "K3", "j1", "p1"}},
		args:  []any{"j1", "tok"}},
	{name: "ack with errors to drop", s: scriptAck, kinds: []string{"zset", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "2:1:tok"}, {"HSET", "K3", "j1", "p1"}, {"HSET", "K4", "j1", "1 1 boom"}},
		args:  []any{"j1", "tok"}},
	{name: "ack with progress to drop", s: scriptAck, kinds: []string{"zset", "hash", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "2:1:tok"}, {"HSET", "K3", "j1", "p1"}, {"HSET", "K5", "j1", "50 1 1 half"}},
		args:  []any{"j1", "tok"}},
	{name: "progress", s: scriptProgress, kinds: []string{"hash", "hash"},
		setup: [][]any{{"HSET", "K1", "j1", "1:0:tok"}},
		args:  []any{"j1", "tok", 50, "half"}},
	{name: "finish", s: scriptFinish, kinds: []string{"zset", "hash", "hash", "hash", "hash", "zset", "hash", "hash", "string", "list"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "2:1:tok"}, {"HSET", "K3", "j1", "p1"}, {"HSET", "K4", "j1", "1 1 boom"}, {"HSET", "K5", "j1", "50 1 1 half"}},
		args:  []any{60000, 10000, 10, 60000, 60000, "j1", "tok", "result", "info", "app.Job|40"}},
	{name: "finish grouped", s: scriptFinish, kinds: []string{"zset", "hash", "hash", "hash", "hash", "zset", "hash", "hash", "string", "list",
		"hash", "zset", "list", "set", "string", "zset", "list"},
		setup: groupedSetup("K1", "K2", "K11", "K12", "K16"),
		args:  []any{60000, 10000, 10, 60000, 60000, "j1", "tok", "result", "info", "app.Job|40"}},
	{name: "finish without a result", s: scriptFinish, kinds: []string{"zset", "hash", "hash", "hash", "hash", "zset", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "1:0:tok"}, {"HSET", "K3", "j1", "p1"}},
		args:  []any{60000, 10000, 10, 60000, 60000, "j1", "tok", "", "info", "app.Job|40"}},
	{name: "release now", s: scriptRelease, kinds: []string{"list", "", "zset", "hash", "list"},
		setup: [][]any{{"ZADD", "K3", 1, "j1"}, {"HSET", "K4", "j1", "1:0:tok"}},
		args:  []any{0, 1, "j1", "tok"}},
	{name: "release later", s: scriptRelease, kinds: []string{"", "zset", "zset", "hash", "list"},
		setup: [][]any{{"ZADD", "K3", 1, "j1"}, {"HSET", "K4", "j1", "1:0:tok"}},
		args:  []any{60000, 1, "j1", "tok"}},
	{name: "release with an error", s: scriptRelease, kinds: []string{"", "zset", "zset", "hash", "list", "hash"},
		setup: [][]any{{"ZADD", "K3", 1, "j1"}, {"HSET", "K4", "j1", "1:0:tok"}, {"HSET", "K6", "j1", "1 1 old"}},
		args:  []any{60000, 1, "boom", "j1", "tok"}},
	{name: "release deferred", s: scriptRelease, kinds: []string{"", "zset", "zset", "hash", "list"},
		setup: [][]any{{"ZADD", "K3", 1, "j1"}, {"HSET", "K4", "j1", "1:0:tok"}},
		args:  []any{60000, "d", "j1", "tok"}},
	{name: "unreserve", s: scriptUnreserve, kinds: []string{"list", "zset", "hash", "list"},
		setup: [][]any{{"ZADD", "K2", 1, "j1"}, {"HSET", "K3", "j1", "1:0:tok"}},
		args:  []any{"j1", "tok"}},
	{name: "fail", s: scriptFail, kinds: []string{"zset", "hash", "hash", "zset", "hash", "hash", "hash", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "1:0:tok"}, {"HSET", "K3", "j1", "p1"}},
		args:  []any{10, 0, "j1", "tok", "info"}},
	{name: "fail with errors to move", s: scriptFail, kinds: []string{"zset", "hash", "hash", "zset", "hash", "hash", "hash", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "2:1:tok"}, {"HSET", "K3", "j1", "p1"}, {"HSET", "K7", "j1", "1 1 boom"}},
		args:  []any{10, 0, "j1", "tok", "info"}},
	// A fail that trims the store, and counts what it dropped.
	{name: "fail trimming", s: scriptFail, kinds: []string{"zset", "hash", "hash", "zset", "hash", "hash", "hash", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "1:0:tok"}, {"HSET", "K3", "j1", "p1"}, {"ZADD", "K4", 1, "j0"}, {"HSET", "K5", "j0", "p0"}},
		args:  []any{1, 0, "j1", "tok", "info"}},
	{name: "retry", s: scriptRetry, kinds: []string{"zset", "hash", "hash", "hash", "hash", "list", "", "hash", "list"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "p1"}, {"HSET", "K3", "j1", "info"}},
		args:  []any{"j1"}},
	{name: "retry with errors", s: scriptRetry, kinds: []string{"zset", "hash", "hash", "hash", "hash", "list", "", "hash", "list"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "p1"}, {"HSET", "K3", "j1", "info"}, {"HSET", "K4", "j1", "1 1 boom"}},
		args:  []any{"j1"}},
	{name: "forget", s: scriptForget, kinds: []string{"zset", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "p1"}, {"HSET", "K3", "j1", "info"}},
		args:  []any{"j1"}},
	{name: "forget with errors", s: scriptForget, kinds: []string{"zset", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "p1"}, {"HSET", "K3", "j1", "info"}, {"HSET", "K4", "j1", "1 1 boom"}},
		args:  []any{"j1"}},
	{name: "prune", s: scriptPrune, kinds: []string{"zset", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "p1"}, {"HSET", "K3", "j1", "info"}},
		args:  []any{1000, 1000}},
	{name: "prune with errors", s: scriptPrune, kinds: []string{"zset", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "p1"}, {"HSET", "K3", "j1", "info"}, {"HSET", "K4", "j1", "1 1 boom"}},
		args:  []any{1000, 1000}},
	{name: "clear", s: scriptClear, kinds: []string{"", "", "", "hash", "", "", "", ""},
		setup: [][]any{{"RPUSH", "K1", "j1"}, {"HSET", "K4", "j1", "p1"}},
		args:  nil},
	{name: "chain_push now", s: scriptChainPush, kinds: []string{"", "list", "", "hash", "list"},
		args: []any{60000, 1, 4, 0, "j1", "p1", 0, ""}},
	{name: "chain_push later", s: scriptChainPush, kinds: []string{"", "list", "zset", "hash", "list"},
		args: []any{60000, 1, 4, 0, "j1", "p1", 1000, ""}},
	{name: "push grouped now", s: scriptPush, kinds: []string{"hash", "list", "", "hash", "list", "zset", "hash", "zset", "list", "set", "string", "zset"},
		setup: [][]any{{"ZADD", "K12", 0, "A\x00j0"}},
		args:  []any{60000, "nonce", 2, 3, 0, "j1", "p1", "2:A", "j2", "p2", "0:B"}},
	{name: "push grouped later", s: scriptPush, kinds: []string{"hash", "list", "zset", "hash", "list", "zset", "hash", "zset", "list", "set", "string", "zset"},
		args: []any{60000, "nonce", 1, 3, 1000, "j1", "p1", "2:A"}},
	// Grouped: a job waits in group A (limit 2, one running), another is
	// back in ready, to go back into its group.
	{name: "reserve grouped", s: scriptReserve, kinds: []string{"list", "zset", "hash", "hash", "list", "", "hash", "zset", "hash", "hash", "zset", "list", "set", "string", "zset"},
		setup: [][]any{{"RPUSH", "K1", "j2"}, {"HSET", "K3", "j1", "p1", "j2", "p2"}, {"HSET", "K10", "j1", "2:A", "j2", "2:A", "r1", "2:A"},
			{"ZADD", "K11", 0, "A\x000000000000000001j1"}, {"RPUSH", "K12", "A"}, {"SADD", "K13", "A"}, {"ZADD", "K15", 0, "A\x00r1"}, {"ZADD", "K2", 1 << 50, "r1"}},
		args: []any{5, 60000, "tok", 60000, 1000}},
	{name: "ack grouped", s: scriptAck, kinds: []string{"zset", "hash", "hash", "", "hash", "hash", "zset", "list", "set", "string", "zset", "list"},
		setup: groupedSetup("K1", "K2", "K6", "K7", "K11"),
		args:  []any{"j1", "tok"}},
	{name: "release grouped", s: scriptRelease, kinds: []string{"list", "", "zset", "hash", "list", "hash", "hash", "zset", "list", "set", "string", "zset"},
		setup: groupedSetup("K3", "K4", "K7", "K8", "K12"),
		args:  []any{0, 1, "", "j1", "tok"}},
	{name: "unreserve grouped", s: scriptUnreserve, kinds: []string{"list", "zset", "hash", "list", "hash", "zset", "list", "set", "string", "zset"},
		setup: groupedSetup("K2", "K3", "K5", "K6", "K10"),
		args:  []any{"j1", "tok"}},
	{name: "fail grouped", s: scriptFail, kinds: []string{"zset", "hash", "hash", "zset", "hash", "hash", "hash", "hash", "hash", "hash", "zset", "list", "set", "string", "zset", "list", "hash"},
		setup: append(groupedSetup("K1", "K2", "K10", "K11", "K15"), []any{"HSET", "K3", "j1", "p1"}),
		args:  []any{10, 0, "j1", "tok", "info"}},
	{name: "chain_push grouped", s: scriptChainPush, kinds: []string{"", "list", "", "hash", "list", "zset", "hash", "zset", "list", "set", "string", "zset"},
		args: []any{60000, 1, 4, 0, "j1", "p1", 0, "2:A"}},
	{name: "step_push", s: scriptStepPush, kinds: []string{"", "list", "", "hash", "list"},
		args: []any{1, 60000, "0", 1, 4, 0, "j1", "p1", 0, ""}},
	{name: "step_push grouped", s: scriptStepPush, kinds: []string{"", "list", "", "hash", "list", "zset", "hash", "zset", "list", "set", "string", "zset"},
		args: []any{1, 60000, "0", 1, 4, 0, "j1", "p1", 0, "2:A"}},
	{name: "step_push with its workflow's states", s: scriptStepPush, kinds: []string{"", "hash", "list", "", "hash", "list"},
		setup: [][]any{{"HSET", "K2", "s1", "q"}},
		args:  []any{1, 60000, "1", "s1", 1, 4, 0, "j1", "p1", 0, ""}},
	{name: "wf_create", s: lua.Get("wf_create"), kinds: wfKinds,
		args: []any{"f", 0, 60000, "", 0, "0", "job0", "", "", "", "", "1", "job1", "", "0", "1", "jid1"}},
	// A wide workflow, stored in parts under keys of its own, then
	// created from them.
	{name: "wf_build", s: lua.Get("wf_build"), kinds: append(append([]string(nil), wfKinds...), "hash"),
		args: []any{"sum", 0, 60000, 0, "0", "job0", "", "", "", "", "1", "job1", "0", "", "1", "jid1"}},
	{name: "wf_build a step and its link entry", s: lua.Get("wf_build"), kinds: append(append([]string(nil), wfKinds...), "hash"),
		args: []any{"sum", 0, 60000, 0, "0", "job0", "", "", "", "", "1", "job1", "0", "", "1-1", "", "1", "", "0", "", "+", ""}},
	{name: "wf_build a later part", s: lua.Get("wf_build"), kinds: append(append([]string(nil), wfKinds...), "hash"),
		setup: [][]any{{"HSET", "K1", "sum", "sum", "b", 1, "n", 1}, {"HSET", "K2", "0", "q"}, {"HSET", "K3", "0", 0},
			{"HSET", "K4", "0", "x"}, {"HSET", "K6", "0", "job0"}},
		args: []any{"sum", 1, 60000, 0, "1", "job1", "0", "", "", ""}},
	{name: "wf_create from parts", s: lua.Get("wf_create"), kinds: append(append([]string(nil), wfKinds...), wfKinds...),
		setup: [][]any{{"HSET", "K10", "sum", "sum", "b", 2, "n", 2}, {"HSET", "K11", "0", "q", "1", "w"},
			{"HSET", "K12", "0", 0, "1", 1}, {"HSET", "K13", "0", "1"}, {"HSET", "K14", "1", "0;"},
			{"HSET", "K15", "0", "job0", "1", "job1"}, {"SADD", "K17", "1"}},
		args: []any{"f", 0, 60000, "", 0, 2, "sum"}},
	{name: "wf_settle", s: lua.Get("wf_settle"), kinds: wfKinds, setup: wfSetup("q", "w"),
		args: []any{"0", "s", 1, "res", ""}},
	{name: "wf_settle fails it", s: lua.Get("wf_settle"), kinds: wfKinds, setup: wfSetup("q", "w"),
		args: []any{"0", "f", 1, "", "boom"}},
	{name: "step_ack", s: lua.Get("step_ack"), kinds: stepAckKinds,
		setup: append(stepAckSetup(), shiftKeys(wfSetup("s", "q"), 3)...),
		args:  []any{"1", 1, "j1", "tok", "1", 1, "res"}},
	{name: "step_ack releasing", s: lua.Get("step_ack"), kinds: stepAckKinds,
		setup: append(stepAckSetup(), shiftKeys(wfSetup("q", "w"), 3)...),
		args:  []any{"1", 1, "j1", "tok", "0", 1, "res"}},
	{name: "step_ack pushing", s: lua.Get("step_ack"), kinds: stepAckKinds,
		setup: append(append(stepAckSetup(), shiftKeys(wfSetup("q", "w"), 3)...), []any{"HSET", "K9", "1#", "jid1"}),
		args:  []any{"1", 1, "j1", "tok", "0", 1, "res"}},
	{name: "step_release", s: lua.Get("step_release"), kinds: append(append([]string(nil), wfKinds...), "list", "", "hash", "list"),
		setup: append(wfSetup("s", "w"), []any{"HSET", "K4", "0>", "1:1:1"}),
		args:  []any{"0", "0"}},
	{name: "step_release pushing", s: lua.Get("step_release"), kinds: append(append([]string(nil), wfKinds...), "list", "", "hash", "list"),
		setup: append(wfSetup("s", "w"), []any{"HSET", "K4", "0>", "1:1:1"}, []any{"HSET", "K6", "1#", "jid1"}),
		args:  []any{"1", "0"}},
	{name: "wf_spawn", s: lua.Get("wf_spawn"), kinds: wfKinds, setup: wfSetup("q", "w"),
		args: []any{"0", 1, 100, "0.0", "job", "", "", ""}},
	{name: "wf_cancel", s: lua.Get("wf_cancel"), kinds: wfKinds, setup: wfSetup("q", "w"),
		args: []any{"cancel"}},
	{name: "wf_retry", s: lua.Get("wf_retry"), kinds: wfKinds,
		setup: append(wfSetup("s", "f"), []any{"HSET", "K1", "st", "failed"}),
		args:  []any{"1", "job1b"}},
	{name: "lock", s: scriptLock, kinds: []string{"string"}, args: []any{"owner", 60000}},
	{name: "unlock", s: scriptUnlock, kinds: []string{"string"},
		setup: [][]any{{"SET", "K1", "owner"}}, args: []any{"owner"}},
	{name: "rate_limit", s: scriptRateLimit, kinds: []string{"zset"}, args: []any{10, 1000, "tok"}},
	{name: "hits", s: scriptHits, kinds: []string{"set"}, args: []any{1000, "nonce"}},
	{name: "schedule_tick", s: scriptScheduleTick, kinds: []string{"hash", "string", "list", "", "hash", "list"},
		args: []any{1000, 0, 60000, 60000, "1", 1, 4, 0, "j1", "p1", 0, ""}},
	{name: "schedule_tick grouped later", s: scriptScheduleTick, kinds: []string{"hash", "list", "zset", "hash", "list", "zset", "hash", "zset", "list", "set", "string", "zset"},
		args: []any{1000, 0, 60000, 0, "0", 1, 4, 0, "j1", "p1", 1000, "1:A"}},
	{name: "schedule_tick paused", s: scriptScheduleTick, kinds: []string{"hash", "string", "list", "", "hash", "list"},
		setup: [][]any{{"HSET", "K1", "paused", "1"}},
		args:  []any{1000, 0, 60000, 60000, "1", 1, 4, 0, "j1", "p1", 0, ""}},
	{name: "schedule_pause pause", s: lua.Get("schedule_pause"), kinds: []string{"hash"},
		args: []any{1, 60000}},
	{name: "schedule_pause resume", s: lua.Get("schedule_pause"), kinds: []string{"hash"},
		setup: [][]any{{"HSET", "K1", "tick", 1000, "paused", "1"}},
		args:  []any{0, 60000}},
	{name: "failed_moved", s: mustScript("failed_moved"), kinds: []string{"zset", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 5, "j1", 6, "j2"}, {"HSET", "K2", "j1", "p1", "j2", "p2"}, {"HSET", "K3", "j1", "i1"}},
		args:  []any{"j1", 5, "j2", 7}},
	{name: "failed_record", s: scriptFailedRecord, kinds: []string{"zset", "hash", "hash", "hash", "hash"},
		args: []any{10, 60000, "j1", "p1", "info"}},
	{name: "failed_record trimming errors", s: scriptFailedRecord, kinds: []string{"zset", "hash", "hash", "hash", "hash"},
		setup: [][]any{{"ZADD", "K1", 1, "j0"}, {"HSET", "K4", "j0", "1 1 boom"}},
		args:  []any{1, 60000, "j1", "p1", "info"}},
	{name: "hooks_due", s: scriptHooksDue, kinds: []string{"zset"}, args: []any{"j1 tok", ""}},
	{name: "hooks_claim", s: scriptHooksClaim, kinds: []string{"zset"},
		setup: [][]any{{"ZADD", "K1", 1, "j1 tok"}}, args: []any{0, 100}},
	{name: "batch_add create", s: scriptBatchAdd, kinds: []string{"hash", "", "", ""},
		args: []any{"create", 2, 60000, "nonce", "name", "x"}},
	{name: "batch_add add", s: scriptBatchAdd, kinds: []string{"hash", "", "", ""},
		setup: [][]any{{"HSET", "K1", "total", 1, "pending", 1, "failed", 0, "blocked", 0}},
		args:  []any{"add", 2, 60000, "nonce"},
		bad: []badValue{
			{[][]any{{"HSET", "K1", "pending", "x"}}, `field pending of K1 holds "x", not an integer`},
			{[][]any{{"HSET", "K1", "total", "1.5"}}, `field total of K1 holds "1.5", not an integer`},
		}},
	{name: "batch_cancel", s: scriptBatchCancel, kinds: []string{"hash", "", "", ""},
		setup: [][]any{{"HSET", "K1", "total", 1, "pending", 1, "failed", 0, "blocked", 0}},
		args:  []any{60000}},
	{name: "batch_done", s: scriptBatchDone, kinds: []string{"hash", "set", "hash", "hash"},
		setup: [][]any{{"HSET", "K1", "total", 2, "pending", 1, "failed", 1, "blocked", 1, "then", "cb", "finally", "cb"},
			{"HSET", "K3", "j1", "q"}, {"HSET", "K4", "j1", 1}},
		args: []any{"j1", 60000},
		bad: []badValue{
			{[][]any{{"HSET", "K1", "failed", "many"}}, `field failed of K1 holds "many", not an integer`},
			{[][]any{{"HSET", "K1", "blocked", ""}}, `field blocked of K1 holds "", not an integer`},
			{[][]any{{"HSET", "K4", "j1", "x"}}, `field j1 of K4 holds "x", not an integer`},
		}},
	{name: "batch_fail", s: scriptBatchFail, kinds: []string{"hash", "set", "hash", "hash"},
		setup: [][]any{{"HSET", "K1", "total", 2, "pending", 2, "failed", 0, "blocked", 0, "catch", "cb"}},
		args:  []any{"j1", "q", 1, 60000},
		bad: []badValue{
			{[][]any{{"HSET", "K1", "pending", "two"}}, `field pending of K1 holds "two", not an integer`},
			{[][]any{{"HSET", "K1", "blocked", "99999999999999999999"}}, `field blocked of K1`},
		}},
	{name: "batch_ran", s: scriptBatchRan, kinds: []string{"hash", "", "", ""},
		setup: [][]any{{"HSET", "K1", "total", 1, "pending", 0, "failed", 0, "blocked", 0, "finally", "cb"}},
		args:  []any{"then", "j1", 60000},
		bad: []badValue{
			{[][]any{{"HSET", "K1", "pending", "none"}}, `field pending of K1 holds "none", not an integer`},
		}},

	// Laravel's queue layout (package laravel): scores are unix seconds.
	{name: "laravel_push", s: lua.Get("laravel_push"), kinds: []string{"list", "list"},
		args: []any{"p1", "p2"}},
	{name: "laravel_later", s: lua.Get("laravel_later"), kinds: []string{"zset"},
		args: []any{60, "p1", "p2"}},
	{name: "laravel_migrate", s: lua.Get("laravel_migrate"), kinds: []string{"zset", "zset", "list", "list"},
		setup: [][]any{{"ZADD", "K1", 1, "d1"}, {"ZADD", "K2", 1, "r1"}},
		args:  []any{1000}},
	{name: "laravel_pop", s: lua.Get("laravel_pop"), kinds: []string{"list", "zset", "list"},
		setup: [][]any{{"RPUSH", "K1", "j1", "j2"}, {"RPUSH", "K3", 1, 1}},
		args:  []any{90, "j1", "r1"}},
	{name: "laravel_release", s: lua.Get("laravel_release"), kinds: []string{"zset", "zset"},
		setup: [][]any{{"ZADD", "K2", 1, "r1"}},
		args:  []any{"r1", 60}},
	{name: "laravel_delete", s: lua.Get("laravel_delete"), kinds: []string{"zset"},
		setup: [][]any{{"ZADD", "K1", 1, "r1"}},
		args:  []any{"r1"}},
	{name: "laravel_extend", s: lua.Get("laravel_extend"), kinds: []string{"zset"},
		setup: [][]any{{"ZADD", "K1", 1, "r1"}},
		args:  []any{"r1", 60}},
}

// wfKinds are the types of a workflow's keys (lib/workflow.lua).
var wfKinds = []string{"hash", "hash", "hash", "hash", "hash", "hash", "hash", "set", "hash"}

// wfSetup fills the keys of a running workflow of two steps, 1 after 0,
// in states s0 and s1.
func wfSetup(s0, s1 string) [][]any {
	return [][]any{
		{"HSET", "K1", "st", "run", "n", 2, "open", 2, "pol", "f", "dl", 0, "ret", 60000, "at", 1},
		{"HSET", "K2", "0", s0, "1", s1}, {"HSET", "K3", "0", 0, "1", 1}, {"HSET", "K4", "0", "1"},
		{"HSET", "K5", "1", "0;"}, {"HSET", "K6", "0", "job0", "1", "job1"},
	}
}

// stepAckKinds are step_ack's keys: reserved, state, errors, one
// workflow's, then the queue's ready, delayed (never written: a step it
// pushes has no delay), payloads and notify.
var stepAckKinds = append(append([]string{"zset", "hash", "hash"}, wfKinds...), "list", "", "hash", "list")

// stepAckSetup fills the keys of an ack of job j1 (token tok), with an
// error recorded.
func stepAckSetup() [][]any {
	return [][]any{{"ZADD", "K1", 1, "j1"}, {"HSET", "K2", "j1", "1:0:tok"}, {"HSET", "K15", "j1", "p1"}, {"HSET", "K3", "j1", "1 1 boom"}}
}

// shiftKeys renames the placeholders K<n> of setup to K<n+by>.
func shiftKeys(setup [][]any, by int) [][]any {
	out := make([][]any, len(setup))
	for i, c := range setup {
		out[i] = append([]any(nil), c...)
		if k, ok := c[1].(string); ok && strings.HasPrefix(k, "K") {
			if n, err := strconv.Atoi(k[1:]); err == nil {
				out[i][1] = "K" + strconv.Itoa(n+by)
			}
		}
	}
	return out
}

// groupedSetup fills the keys of a settle of job j1 (token tok) of
// group A, limit 1, with j2 waiting: reserved, state, group-of, wait and
// running are the placeholders of their keys.
func groupedSetup(reserved, state, of, wait, running string) [][]any {
	return [][]any{
		{"ZADD", reserved, 1 << 50, "j1"}, {"HSET", state, "j1", "1:0:tok"},
		{"HSET", of, "j1", "1:A", "j2", "1:A"}, {"ZADD", wait, 0, "A\x000000000000000002j2"}, {"ZADD", running, 0, "A\x00j1"},
	}
}

// TestScriptsWriteNothingWhenTheyFail runs each script that writes with
// one key of the wrong type at a time, and with the values it reads
// spoilt: each such call must fail with an error that names the key, and
// change nothing. Redis keeps what a script wrote before a command of it
// failed, so a script must find all that can fail before it writes.
func TestScriptsWriteNothingWhenTheyFail(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{scriptSizes.Name: true, "laravel_sizes": true} // they only read
	for _, c := range failCases {
		covered[c.s.Name] = true
	}
	for _, s := range allScripts {
		require.True(t, covered[s.Name], "script %s writes, and has no case in failCases", s.Name)
	}

	eachClient(t, func(t *testing.T, ctx context.Context, _ redistest.Backend, rdb redis.UniversalClient) {
		for _, c := range failCases {
			t.Run(c.name, func(t *testing.T) { c.check(t, ctx, rdb) })
		}
	})
}

func (c failCase) check(t *testing.T, ctx context.Context, rdb redis.UniversalClient) {
	// Untouched, the call succeeds, and writes.
	keys := c.fill(t, ctx, rdb, nil)
	before := snapshot(t, ctx, rdb, keys)
	require.NoError(t, c.run(ctx, rdb, keys), "the call as set up")
	require.NotEqual(t, before, snapshot(t, ctx, rdb, keys), "the call as set up writes nothing: the case tests nothing")

	for i, kind := range c.kinds {
		if kind == "" {
			continue
		}
		// A string where the script wants anything else; a hash where it
		// wants a string.
		spoil := [][]any{{"DEL", key(i)}, {"SET", key(i), "wrong"}}
		got := "string"
		if kind == "string" {
			spoil, got = [][]any{{"DEL", key(i)}, {"HSET", key(i), "f", "wrong"}}, "hash"
		}
		keys := c.fill(t, ctx, rdb, spoil)
		before := snapshot(t, ctx, rdb, keys)
		err := c.run(ctx, rdb, keys)
		require.Error(t, err, "KEYS[%d] holds a %s", i+1, got)
		require.ErrorContains(t, err, fmt.Sprintf("WRONGTYPE %s holds a %s, not a %s", keys[i], got, kind))
		require.Equal(t, before, snapshot(t, ctx, rdb, keys), "the failed call changed a key")
	}

	for _, b := range c.bad {
		keys := c.fill(t, ctx, rdb, b.cmds)
		before := snapshot(t, ctx, rdb, keys)
		err := c.run(ctx, rdb, keys)
		want := b.wantErr
		for i := range keys {
			want = strings.ReplaceAll(want, key(i), keys[i])
		}
		require.ErrorContains(t, err, want)
		require.Equal(t, before, snapshot(t, ctx, rdb, keys), "the failed call changed a key")
	}
}

// key is the placeholder of KEYS[i+1] in a case's commands.
func key(i int) string { return fmt.Sprint("K", i+1) }

// fill makes fresh keys for the case, runs its setup and then spoil, and
// returns the keys.
func (c failCase) fill(t *testing.T, ctx context.Context, rdb redis.UniversalClient, spoil [][]any) []string {
	t.Helper()
	p := redistest.Prefix(t) + ":{q}:"
	keys := make([]string, len(c.kinds))
	for i := range keys {
		keys[i] = fmt.Sprint(p, i+1)
	}
	for _, cmd := range append(slices.Clone(c.setup), spoil...) {
		args := slices.Clone(cmd)
		for j, a := range args {
			for i := range keys {
				if a == key(i) {
					args[j] = keys[i]
				}
			}
		}
		require.NoError(t, rdb.Do(ctx, args...).Err(), "%v", cmd)
	}
	return keys
}

func (c failCase) run(ctx context.Context, rdb redis.UniversalClient, keys []string) error {
	err := call{Script: c.s, Keys: keys, Args: c.args}.Run(ctx, rdb).Err()
	if err == redis.Nil {
		return nil
	}
	return err
}

// snapshot reads every key: its type, value and whether it expires.
func snapshot(t *testing.T, ctx context.Context, rdb redis.UniversalClient, keys []string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, k := range keys {
		typ, err := rdb.Type(ctx, k).Result()
		require.NoError(t, err)
		var v any
		switch typ {
		case "none":
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "list":
			v, err = rdb.LRange(ctx, k, 0, -1).Result()
		case "hash":
			v, err = rdb.HGetAll(ctx, k).Result()
		case "zset":
			v, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "set":
			var m []string
			m, err = rdb.SMembers(ctx, k).Result()
			slices.Sort(m)
			v = m
		default:
			t.Fatalf("key %s is a %s", k, typ)
		}
		require.NoError(t, err)
		ttl, err := rdb.PTTL(ctx, k).Result()
		require.NoError(t, err)
		out[k] = []any{typ, v, ttl > 0}
	}
	return out
}

// A resume with a bad expiry changes nothing: the check comes before the
// flag is cleared.
func TestSchedulePauseRefusesBadKeep(t *testing.T) {
	t.Parallel()
	eachClient(t, func(t *testing.T, ctx context.Context, _ redistest.Backend, rdb redis.UniversalClient) {
		k := redistest.Prefix(t) + ":{q}:schedule:e"
		require.NoError(t, rdb.HSet(ctx, k, "paused", "1", "tick", "5").Err())
		for _, keep := range []any{0, -5, "soon", 1.5} {
			err := call{Script: lua.Get("schedule_pause"), Keys: []string{k}, Args: []any{0, keep}}.Run(ctx, rdb).Err()
			require.ErrorContains(t, err, "schedule_pause: bad keep", "keep %v", keep)
			require.Equal(t, map[string]string{"paused": "1", "tick": "5"}, rdb.HGetAll(ctx, k).Val())
		}
		n, err := call{Script: lua.Get("schedule_pause"), Keys: []string{k}, Args: []any{0, 60000}}.Run(ctx, rdb).Int64()
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		require.Equal(t, map[string]string{"tick": "5"}, rdb.HGetAll(ctx, k).Val())
	})
}
