package dashboard

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/jobgen/jobgen/runtime"
)

// The Redis page shows what each server that holds the engine's keys
// says of itself: one INFO command a server (every node of a cluster).

// serverView is one server on the Redis page.
type serverView struct {
	Addr string
	Err  string
	// Facts are label and value pairs, in the page's order.
	Facts []fact
	// DBs are the keyspace lines: "db0" and "keys=12,expires=3,...".
	DBs []fact
	// Evicts is set when the server's policy may evict jobgen's keys.
	Evicts bool
	Policy string
}

type fact struct{ Label, Value string }

// serverFacts are the INFO fields the page shows, with their labels;
// sizes in bytes are written in KB, MB or GB.
var serverFacts = []struct {
	field, label string
	bytes        bool
}{
	{"redis_version", "Version", false},
	{"redis_mode", "Mode", false},
	{"role", "Role", false},
	{"connected_slaves", "Replicas", false},
	{"uptime_in_seconds", "Up for", false},
	{"connected_clients", "Clients", false},
	{"blocked_clients", "Blocked clients", false},
	{"maxclients", "Max clients", false},
	{"used_memory", "Memory used", true},
	{"used_memory_peak", "Memory peak", true},
	{"maxmemory", "Max memory", true},
	{"mem_fragmentation_ratio", "Fragmentation", false},
	{"evicted_keys", "Evicted keys", false},
	{"expired_keys", "Expired keys", false},
	{"instantaneous_ops_per_sec", "Commands per second", false},
	{"total_commands_processed", "Commands since start", false},
	{"rejected_connections", "Rejected connections", false},
}

func (h *handler) redisPage(w http.ResponseWriter, r *http.Request) {
	servers := h.ins.Servers(r.Context())
	views := make([]serverView, 0, len(servers))
	for _, s := range servers {
		v := serverView{Addr: s.Addr}
		if s.Err != nil {
			h.opts.Logger.Error("dashboard: a Redis server's INFO could not be read", "addr", s.Addr, "err", s.Err)
			v.Err = "INFO could not be read from this server; the dashboard's log has the details."
			views = append(views, v)
			continue
		}
		for _, f := range serverFacts {
			val, ok := s.Fields[f.field]
			if !ok {
				continue
			}
			switch {
			case f.field == "uptime_in_seconds":
				if n, err := strconv.ParseInt(val, 10, 64); err == nil {
					val = duration(secondsDur(n))
				}
			case f.field == "maxmemory" && val == "0":
				val = "no limit"
			case f.bytes:
				if n, err := strconv.ParseInt(val, 10, 64); err == nil {
					val = bytesHuman(n)
				}
			}
			v.Facts = append(v.Facts, fact{f.label, val})
		}
		v.Policy = s.Fields["maxmemory_policy"]
		v.Evicts = runtime.ServerMemory{Policy: v.Policy}.Evicts()
		for k, val := range s.Fields {
			if strings.HasPrefix(k, "db") && strings.Contains(val, "keys=") {
				v.DBs = append(v.DBs, fact{k, val})
			}
		}
		sort.Slice(v.DBs, func(a, b int) bool { return v.DBs[a].Label < v.DBs[b].Label })
		views = append(views, v)
	}
	h.render(w, r, "redis", "Redis", map[string]any{"Servers": views}, true)
}
