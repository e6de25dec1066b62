package runtime_test

import (
	"testing"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/runtime"
)

// forEachBusBackend is forEachWorkerBackend with an engine config, and
// with the backend, so that a test can open more engines on it.
func forEachBusBackend(t *testing.T, cfg runtime.EngineConfig, fn func(t *testing.T, b wbundle, be redistest.Backend)) {
	t.Helper()
	for _, be := range redistest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, be, cfg)
			wb := wbundle{bundle: b, router: runtime.NewRouter(), log: &eventLog{}}
			wb.ctx = runtime.WithDispatcher(b.ctx, b.engine)
			b.engine.Subscribe(wb.log.add)
			fn(t, wb, be)
		})
	}
}

// open opens another engine on be with b's prefix.
func (b wbundle) open(t *testing.T, be redistest.Backend, cfg runtime.EngineConfig) *runtime.Engine {
	t.Helper()
	cfg.Prefix = b.prefix
	e, err := runtime.Open(b.ctx, be.URL, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}
