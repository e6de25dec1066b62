// Package embedded adds embedded:// URLs to runtime.Open: an in-process
// Redis-protocol server (miniredis) that runs jobgen's Lua scripts, for
// quickstarts and unit tests. Import it for its side effect:
//
//	import _ "github.com/jobgen/jobgen/runtime/embedded"
//
//	e, err := runtime.Open(ctx, "embedded://", runtime.EngineConfig{})
//
// Engines opened with the same name in one process share a server, which
// keeps nothing on disk and stops when its last engine is closed. jobtest
// imports it, so tests built on jobtest have it. A production binary
// that does not import it links no miniredis, and an embedded:// URL there
// is an error that names this import.
package embedded

import (
	"github.com/jobgen/jobgen/internal/miniserver"
	"github.com/jobgen/jobgen/internal/urlscheme"
)

func init() { urlscheme.Register("embedded", miniserver.Open) }
