package runtime

import (
	"context"

	"github.com/jobgen/jobgen/internal/eviction"
)

// ServerMemory is what one Redis server says of its memory (INFO
// memory): each master of a cluster, or the one server.
type ServerMemory struct {
	// Addr is the server's address.
	Addr string
	// Used is used_memory, in bytes; -1 if the server does not say
	// (INFO memory refused, as by an embedded server).
	Used int64
	// Max is maxmemory, in bytes; 0 means no limit.
	Max int64
	// Policy is maxmemory_policy; anything but noeviction may evict
	// jobgen's keys (ErrEvicting).
	Policy string
	// Err is why the server could not be read at all; the fields above
	// are zero then.
	Err error
}

// Evicts reports whether the server's policy may evict jobgen's keys.
func (m ServerMemory) Evicts() bool { return eviction.Evicts(m.Policy) }

// Memory reads INFO memory from every server that holds the engine's
// keys. A server that cannot be read comes with its Err.
func (i *Inspector) Memory(ctx context.Context) []ServerMemory {
	var out []ServerMemory
	for _, m := range i.e.store.Memory(ctx) {
		out = append(out, ServerMemory{Addr: m.Addr, Used: m.Used, Max: m.Max, Policy: m.Policy, Err: m.Err})
	}
	return out
}
