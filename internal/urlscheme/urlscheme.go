// Package urlscheme holds the Redis URL schemes that packages add to
// runtime.Open, as database/sql holds its drivers: runtime/embedded adds
// embedded://, so that only the programs that import it link the
// in-process server.
package urlscheme

import (
	"sync"

	"github.com/redis/go-redis/v9"
)

// OpenFunc opens a client for the host and path of a URL of the scheme,
// and returns a function that closes it.
type OpenFunc func(hostPath string) (redis.UniversalClient, func() error, error)

var schemes sync.Map // scheme -> OpenFunc

// Register makes scheme open with open. A later Register of the same
// scheme replaces it.
func Register(scheme string, open OpenFunc) { schemes.Store(scheme, open) }

// Lookup returns the OpenFunc of scheme, if one was registered.
func Lookup(scheme string) (OpenFunc, bool) {
	f, ok := schemes.Load(scheme)
	if !ok {
		return nil, false
	}
	return f.(OpenFunc), true
}
