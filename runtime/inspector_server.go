package runtime

import (
	"context"
	"fmt"
)

// ServerInfo is what one Redis server that holds the engine's keys says
// of itself (INFO server, clients, memory, stats, keyspace and
// replication): each node of a cluster, masters and replicas, or the one
// server.
type ServerInfo struct {
	// Addr is the server's address.
	Addr string
	// Fields are INFO's fields by name ("redis_version",
	// "used_memory", "maxmemory_policy", "connected_clients", ...).
	Fields map[string]string
	// Err is why the server could not be read; Fields is nil then.
	Err error
}

// Servers reads INFO from every server that holds the engine's keys
// (every node of a cluster, its replicas too), sorted by address: one
// command a server.
func (i *Inspector) Servers(ctx context.Context) []ServerInfo {
	var out []ServerInfo
	for _, s := range i.e.store.ServerInfos(ctx) {
		out = append(out, ServerInfo{Addr: s.Addr, Fields: s.Fields, Err: s.Err})
	}
	return out
}

// ResultHead is the start of a job's recorded result, as
// Inspector.Result reads it.
type ResultHead struct {
	// Encoded is the whole encoded (msgpack) result when it is at most
	// the limit asked for; nil when it is longer.
	Encoded []byte
	// Size is the length of the encoded result, in bytes.
	Size int64
}

// Result reads the result that job id of queue recorded
// (RecordResult), if it is at most limit bytes encoded; a longer one
// comes back with its Size only, so that a page never loads a big
// result whole (Engine.ReadResult reads it all). ok is false while the
// job has none. Two commands, in one round trip.
func (i *Inspector) Result(ctx context.Context, queue, id string, limit int64) (ResultHead, bool, error) {
	if err := validateQueueOrPartition(queue); err != nil {
		return ResultHead{}, false, err
	}
	v, size, ok, err := i.e.store.ResultHead(ctx, i.e.keys.Result(queue, id), max(limit, 0))
	if err != nil {
		return ResultHead{}, false, fmt.Errorf("read result of job %s on queue %q: %w", id, queue, err)
	}
	return ResultHead{Encoded: v, Size: size}, ok, nil
}
