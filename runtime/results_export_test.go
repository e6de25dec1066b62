package runtime

import "time"

// SetAwaitStep makes e's Await wait up to d in each BLPOP, for the
// tests of package runtime_test.
func SetAwaitStep(e *Engine, d time.Duration) { e.awaitStep = d }
