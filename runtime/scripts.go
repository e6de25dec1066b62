package runtime

import (
	"github.com/jobgen/jobgen/internal/send"
	"github.com/jobgen/jobgen/runtime/lua"
)

// script is one Lua script of runtime/lua, run by SHA with NOSCRIPT
// recovery.
type script = lua.Script

// allScripts is every script of runtime/lua, the Laravel bridge's
// included, in name order, so that none is left out of the tests that
// check every script (that it writes nothing when it fails, that it
// touches only the keys it is given).
var allScripts = lua.All()

// mustScript returns the script name.
func mustScript(name string) *script { return lua.Get(name) }

// The scripts runtime calls itself; internal/rdb holds those of the
// reserve, the settles, the failed store, hooks, cancels, progress,
// sizes and batches.
var (
	scriptPush = mustScript("push")

	// Chains, batches, unique jobs and job middleware.
	scriptChainPush = mustScript("chain_push")
	scriptStepPush  = mustScript("step_push")
	scriptLock      = mustScript("lock")
	scriptUnlock    = mustScript("unlock")
	scriptBatchAdd  = mustScript("batch_add")
	scriptRateLimit = mustScript("rate_limit")
	scriptHits      = mustScript("hits")
)

// call is one script invocation (internal/send).
type call = send.Call
