// Package keyspace names every Redis key jobgen uses, with its Redis type,
// under a prefix. The keys of one queue share its hash tag, {queue}, so
// that every script touches one cluster slot.
package keyspace

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Keys builds every Redis key jobgen uses. No other file, and no Lua
// script, builds a key name.
//
// All keys of one queue share the hash tag {queue}, so every script
// touches a single cluster slot. They are named <prefix>:{queue}:<name>,
// except the short-lived records of recent calls, which are named apart,
// <prefix>:calls:{queue}:<tick> (see Calls).
type Keys struct {
	prefix string
	cache  *keyCache
}

// keyCache holds the keys of the first maxCachedQueues queue names an
// engine uses.
type keyCache struct {
	byName sync.Map // queue name -> *QueueKeys
	n      atomic.Int64
}

const maxCachedQueues = 1024

// New returns the keys under prefix.
func New(prefix string) Keys { return Keys{prefix: prefix, cache: &keyCache{}} }

// QueueKeys are the keys of one queue.
type QueueKeys struct {
	Ready    string // LIST of job IDs ready to run, oldest first
	Delayed  string // ZSET job ID -> due time (unix ms)
	Reserved string // ZSET job ID -> lease deadline (unix ms)
	Payloads string // HASH job ID -> encoded envelope
	// State is a HASH job ID -> "attempts:exceptions:token": attempts so
	// far (counted on reserve), exceptions so far, and the token of the
	// current reservation ("" when not reserved). One hash, so reserve and
	// ack touch one field per job for all three.
	State          string
	Notify         string // LIST doorbell: holds at most one element
	Paused         string // STRING present while the queue is paused
	Failed         string // ZSET job ID -> failed at (unix ms)
	FailedPayloads string // HASH job ID -> encoded envelope of a failed job
	FailedInfo     string // HASH job ID -> encoded FailedInfo
	// Errors is a HASH job ID -> the errors of the job's last attempts
	// that ended in one and were released (at most 10, oldest first):
	// records "<unix ms> <attempt> <message>" separated by the byte 0x1e
	// (runtime/lua/lib/attempt_errors.lua). A job's entry goes when it is
	// acked, and moves to FailedErrors when it fails or is cancelled.
	Errors string
	// FailedErrors is a HASH failed job ID -> its entry of Errors when it
	// failed, kept and trimmed with the failed store.
	FailedErrors string
	// FailedTrimmed is a HASH of what trimming the failed store dropped
	// (runtime/lua/lib/failed_trim.lua): count, the failed jobs trimmed in
	// all; at, the Redis ms of the last trim; last, how many it dropped.
	// Flushing or pruning the store leaves it.
	FailedTrimmed string
	// Progress is a HASH job ID -> "<percent> <unix ms> <attempt> <note>":
	// how far a running job has got (runtime.Progress), written at most
	// once a second per job, under its reservation's token. A job's entry
	// goes when it is acked (by a worker that saw it report progress),
	// failed, cancelled or cleared.
	Progress string
	// Hooks is a ZSET "job ID token" -> Redis ms: jobs being failed whose
	// hooks (batch, chain catch, failed hook, unique lock) may not have
	// run yet, recorded before the fail under the reservation's token,
	// removed once they ran, and claimed by another worker's sweep when
	// older than RetryAfter (hooks.go).
	Hooks string
	// Settings is a HASH of the queue's flow limits and their counts
	// (runtime/flow_limit.go, lua/lib/flow_limit.lua): limit, rate,
	// rate_ms, win, used, held_limit, held_rate. Absent for a queue with
	// none; reserve reads it with one HMGET.
	Settings string
	// Monitored is a SET of the tags monitored on the queue (a copy of
	// the engine's MonitoredTags, written to every known queue): a push
	// records a job carrying one of them in TagJobs(tag).
	Monitored string
	// tagPrefix names the TagJobs keys.
	tagPrefix string

	// The keys of fair groups (docs/flow-control.md); they exist only
	// while the queue holds grouped jobs. A group's members sort by
	// "<group>\x00...", so one ZSET holds every group in its own range.

	// GroupOf is a HASH job ID -> "<limit>:<group>" of every grouped job,
	// live or failed: the group it is put back into when it comes back to
	// ready, and its group's concurrency limit (0: none).
	GroupOf string
	// GroupWait is a ZSET, every score 0, of "<group>\x00<seq>" + job ID
	// (seq: 16 digits, from GroupSeq): each group's waiting jobs in
	// order.
	GroupWait string
	// GroupRing is a LIST of the groups whose turn it is, each once: the
	// groups with waiting jobs and below their limit.
	GroupRing string
	// GroupActive is a SET of the groups in GroupRing.
	GroupActive string
	// GroupSeq is a STRING counter that orders GroupWait's members.
	GroupSeq string
	// GroupRunning is a ZSET, every score 0, of "<group>\x00" + job ID
	// for the reserved jobs of groups with a limit.
	GroupRunning string
}

// Groups returns the keys of qk's fair groups, in the order the scripts
// take them: GroupOf, GroupWait, GroupRing, GroupActive, GroupSeq,
// GroupRunning.
func (qk QueueKeys) Groups() []string {
	return []string{qk.GroupOf, qk.GroupWait, qk.GroupRing, qk.GroupActive, qk.GroupSeq, qk.GroupRunning}
}

// Queue returns the keys of queue name. They are built once per name and
// engine, for the first maxCachedQueues names: every push and reserve
// needs them, and building them takes ten allocations.
func (k Keys) Queue(name string) QueueKeys {
	if k.cache == nil {
		return k.Build(name)
	}
	if qk, ok := k.cache.byName.Load(name); ok {
		return *qk.(*QueueKeys)
	}
	qk := k.Build(name)
	if k.cache.n.Load() < maxCachedQueues {
		if _, had := k.cache.byName.LoadOrStore(name, &qk); !had {
			k.cache.n.Add(1)
		}
	}
	return qk
}

func (k Keys) Build(name string) QueueKeys {
	p := k.prefix + ":{" + name + "}:"
	return QueueKeys{
		Ready:          p + "ready",
		Delayed:        p + "delayed",
		Reserved:       p + "reserved",
		Payloads:       p + "payloads",
		State:          p + "state",
		Notify:         p + "notify",
		Paused:         p + "paused",
		Failed:         p + "failed",
		FailedPayloads: p + "failed:payloads",
		FailedInfo:     p + "failed:info",
		Errors:         p + "errors",
		FailedErrors:   p + "failed:errors",
		FailedTrimmed:  p + "failed:trimmed",
		Progress:       p + "progress",
		Hooks:          p + "hooks",
		Settings:       p + "settings",
		GroupOf:        p + "group:of",
		GroupWait:      p + "group:wait",
		GroupRing:      p + "group:ring",
		GroupActive:    p + "group:active",
		GroupSeq:       p + "group:seq",
		GroupRunning:   p + "group:running",
		Monitored:      p + "monitored",
		tagPrefix:      p + "tag:",
	}
}

// TagJobs is a ZSET job ID -> pushed at (Redis unix ms) of the newest
// jobs pushed to the queue carrying monitored tag (lib/enqueue.lua),
// trimmed to a bound at each push. It lives in the queue's slot, so the
// push writes it.
func (qk QueueKeys) TagJobs(tag string) string { return qk.tagPrefix + tag }

// Wake is a LIST that worker id's doorbell BLPOP waits on beside the
// doorbells of its queues, in the slot of queue, the first it waits on:
// a push to it ends the BLPOP when the worker stops. It expires a second
// after the push if the BLPOP had ended already.
func (k Keys) Wake(queue, id string) string {
	return k.prefix + ":{" + queue + "}:wake:" + id
}

// Queues is a SET of every queue name that has been pushed to. It lives
// outside any queue's slot and is never touched by a script.
func (k Keys) Queues() string { return k.prefix + ":queues" }

// MonitoredTags is a SET of the monitored tags (Inspector.MonitorTag):
// the list the dashboard shows, and what a queue's Monitored set is a
// copy of. It lives outside any queue's slot and no script touches it.
func (k Keys) MonitoredTags() string { return k.prefix + ":monitored" }

// Restart is a STRING holding the unix ms of the last restart broadcast.
func (k Keys) Restart() string { return k.prefix + ":restart" }

// Notes is no key but a pub/sub channel: the notes that reach running
// workers at once (a running job cancelled, a restart broadcast). On a
// Cluster it is a shard channel (SPUBLISH, SSUBSCRIBE), in its own slot.
func (k Keys) Notes() string { return k.prefix + ":notes" }

// Chained is a STRING "1", with a lifetime of StateRetention, set when
// link id of a chain was pushed onto queue. It is in the queue's slot, so
// the push and the marker are one script call (chain.go).
func (k Keys) Chained(queue, id string) string {
	return k.prefix + ":{" + queue + "}:chained:" + id
}

// Calls is a HASH of the push and reserve calls made to queue in one
// span of time (CallsSpan of the retry window; by the caller's clock,
// CallsTick): for a push or later call, its nonce -> "1"; for a reserve
// call that took jobs, its token -> their lease deadline (unix ms). It
// is kept for the retry window plus one span after its first write
// (PEXPIRE NX), so every call in it is remembered for at least the
// window. A retry of a call by the Redis client names the same hash (the
// caller computes the name once) and finds the call there: a push adds
// nothing, a reserve hands back the jobs it took (push.lua, later.lua,
// reserve.lua).
//
// A queue has at most window/span + 2 of these at a time: 14 with the
// default window of a minute (spans of 5 s), however busy it is. A span
// of 10 ms, as before, made a busy queue thousands of keys (74 of the
// 104 keys of Redis after 3,000 dispatches); a span as long as the
// window would make one hash of a busy queue so large that freeing it at
// its expiry stalls Redis (a hash table of 10,000 calls takes about
// 1 ms).
//
// They are named apart from the queue's other keys, under the
// sub-prefix "<prefix>:calls:": <prefix>:calls:{queue}:<tick>. A scan of
// a queue's keys (<prefix>:{queue}:*) does not list them, and key tools
// skip them all with the one pattern <prefix>:calls:*. The hash tag is
// still the first {...} of the name, {queue}, so the hash is in the
// queue's slot. (One hash per queue would need an expiry per field,
// HPEXPIRE, which Redis 7.0 lacks.)
func (k Keys) Calls(queue string, tick int64) string {
	return k.prefix + ":calls:{" + queue + "}:" + strconv.FormatInt(tick, 10)
}

// CallsSpan is the span of time one Calls hash covers for a retry window:
// a twelfth of it, and at least a second.
func CallsSpan(window time.Duration) time.Duration {
	return max(window/12, time.Second)
}

// CallsTick is the tick of t for hashes of span, for keys.Calls.
func CallsTick(t time.Time, span time.Duration) int64 {
	return t.UnixMilli() / span.Milliseconds()
}

// Workers is a ZSET of the live workers under the prefix: worker ID ->
// lease deadline (unix ms, by the worker's clock). Each live worker
// renews its entry every WorkerConfig.MonitorEvery (worker_monitor.go).
func (k Keys) Workers() string { return k.prefix + ":workers" }

// Worker is a STRING holding the JSON WorkerInfo of worker id, with the
// lifetime of its lease, so a dead worker's record goes by itself.
func (k Keys) Worker(id string) string { return k.prefix + ":worker:" + id }

// Metrics is a HASH of the per-minute job counts of one hour (unix
// hours): "minute|kind|queue" -> count, minute in unix minutes and kind
// "processed" or "failed". It expires metricsRetention after its hour
// began (worker_monitor.go).
func (k Keys) Metrics(hour int64) string {
	return k.prefix + ":metrics:" + strconv.FormatInt(hour, 10)
}

// Unique is a STRING holding the ID of the job that holds unique lock
// key, with a lifetime of the job's UniqueFor (unique.go). Only single-key
// commands touch it, so its slot does not matter.
func (k Keys) Unique(key string) string { return k.prefix + ":unique:" + key }

// Schedule is a HASH of the state of the schedule entry name whose jobs
// go to queue (a physical queue: one partition of a partitioned queue):
// tick, the unix ms of the last tick claimed; id and at, the job pushed
// for it and when (Redis clock, unix ms); skipped_at when that tick
// pushed nothing, with skipped_by when the job of an earlier run still
// held the entry's lock (without it, the entry was paused); paused, "1"
// while the entry is paused (schedule.Schedule.PauseEntry,
// schedule_pause.lua), when its ticks are claimed and push nothing. It
// is in the queue's slot (Engine.TickPartition), so the claim of a tick
// and the push of its job are one script call (schedule_tick.lua). It expires StateRetention
// after the entry's next tick, so the state of an entry that was removed
// goes by itself; a paused entry's state does not expire until it is
// resumed.
//
// The lock of an entry without overlapping is keys.unique of
// "{queue}:schedule:name" (runtime's scheduleLockKey): the STRING of a unique job,
// which the worker releases as it does any unique lock, in the slot of
// Queue through its hash tag.
func (k Keys) Schedule(queue, name string) string {
	return k.prefix + ":{" + queue + "}:schedule:" + name
}

// Batches is a ZSET of batch IDs scored by their creation time (unix ms,
// from the ID), newest last: the list the dashboard pages through.
// DispatchBatch adds each batch after creating it, and trims entries
// older than the engine's StateRetention; BatchStore.List drops the IDs
// of batches that no longer exist. It lives outside every slot, and no
// script touches it.
func (k Keys) Batches() string { return k.prefix + ":batches" }

// BatchKeys are the keys of one batch (batch.go). They share the hash
// tag {batch:ID}, in a slot apart from every queue, and only the batch
// scripts touch them, never in the same call as a queue's keys.
type BatchKeys struct {
	// State is a HASH of the batch's counts and options: total, pending,
	// failed, blocked, created_at, cancelled_at, cancelled_by,
	// finished_at, name, queue, allow_failures, and for each callback
	// kind (then, catch, finally) its encoded callbacks, the job that
	// claimed it (kind:by) and whether it ran (kind:done).
	State string
	// Done is a SET of the IDs of the jobs that succeeded.
	Done string
	// Failed is a HASH job ID -> queue of the jobs that failed for good
	// and have not succeeded since.
	Failed string
	// Blocked is a HASH failed job ID -> links of its chain held behind it.
	Blocked string
}

func (k Keys) Batch(id string) BatchKeys {
	p := k.prefix + ":{batch:" + id + "}:"
	return BatchKeys{State: p + "state", Done: p + "done", Failed: p + "failed", Blocked: p + "blocked"}
}

func (b BatchKeys) All() []string { return []string{b.State, b.Done, b.Failed, b.Blocked} }

// The keys of job middleware (middleware_limits.go). Only single-key
// commands and scripts touch each, so their slots do not matter.

// Limiter is a ZSET of the starts in the current window of RateLimited
// key: random token -> start time (unix ms).
func (k Keys) Limiter(key string) string { return k.prefix + ":limit:" + key }

// Overlap is a STRING holding the ID of the job that holds the
// WithoutOverlapping lock key, with a lifetime of its ExpireAfter.
func (k Keys) Overlap(key string) string { return k.prefix + ":overlap:" + key }

// Throttle is a SET of the exceptions of ThrottlesExceptions key, one
// random nonce each, with a lifetime of its decay from the first one. A
// set rather than a counter, so a call the Redis client sends again
// counts its exception once (hits.lua).
func (k Keys) Throttle(key string) string { return k.prefix + ":throttle:" + key }

// Debounce is a HASH, the record of the burst of dispatches of queue
// under debounce key (the job's wire name, ":", its debounce key): id,
// the job that waits for the burst to end, and first, the Redis ms of
// the burst's first dispatch. It expires at the job's due time, when the
// burst ends (runtime/lua/debounce.lua). It is in the queue's slot.
func (k Keys) Debounce(queue, key string) string {
	return k.prefix + ":{" + queue + "}:debounce:" + key
}

// Relayed is a ZSET of the jobs an outbox relay pushed to queue: mark ->
// 1e15 + unix ms of the push while the mark's outbox row may still
// exist, then the unix ms it expires at (runtime/lua/outbox_push.lua).
// A mark is an outbox row ID, or row ID/job ID for a job of a batch row.
func (k Keys) Relayed(queue string) string { return k.prefix + ":{" + queue + "}:relayed" }

// Retried is a ZSET of the failed jobs retried onto queue from a failed
// store outside Redis (runtime's EngineConfig.FailedStore), as Relayed
// holds a relay's: mark -> 1e15 + unix ms of the push while the job's
// failed row may still exist, then the unix ms it expires at. A mark is
// "failed:<job ID>:<failed at ms>". It is apart from Relayed, whose
// marks a relay's Reconcile releases once no outbox row has their ID.
func (k Keys) Retried(queue string) string { return k.prefix + ":{" + queue + "}:retried" }

// Outbox is a HASH of what the outbox relays last saw of their table:
// table, backlog, parked, oldest (unix ms of the oldest row's
// created_at, 0 if none), at (Redis unix ms of the reading). It lives outside any queue's slot and is
// never touched by a script.
func (k Keys) Outbox() string { return k.prefix + ":outbox" }

// The keys of results and finished jobs (runtime/results.go,
// runtime/finished.go). Every one is in the slot of its job's queue, so
// that the ack that finishes a job writes them in the same script call.

// Result is a STRING holding the encoded result that job id of queue
// recorded, written by the ack that finished the job (finish.lua) and
// expiring EngineConfig.ResultRetention after it.
func (k Keys) Result(queue, id string) string {
	return k.prefix + ":{" + queue + "}:result:" + id
}

// Done is a LIST that the ack of job id of queue pushes one element to
// when the job has a result, and the worker when such a job fails, so
// that Await waits on it with BLPOP rather than polling. It expires a
// few seconds after the push (doneTTL in runtime/results.go).
func (k Keys) Done(queue, id string) string {
	return k.prefix + ":{" + queue + "}:done:" + id
}

// Finished is a ZSET of the jobs of queue finished lately: job ID ->
// finished at (Redis unix ms), kept within the queue's FinishedConfig
// bounds by the ack that adds to it (finish.lua). Only queues that keep
// finished jobs have it.
func (k Keys) Finished(queue string) string { return k.prefix + ":{" + queue + "}:finished" }

// FinishedInfo is a HASH job ID -> encoded finishedInfo of the jobs
// Finished lists.
func (k Keys) FinishedInfo(queue string) string {
	return k.prefix + ":{" + queue + "}:finished:info"
}

// Runtimes is a HASH of the runtimes of the jobs of queue finished in
// one slot of ten minutes (unix ms / 600,000): "name|bucket" -> count,
// bucket being the runtime's histogram bucket (runtimeBucket in
// runtime/finished_metrics.go). It expires a day and a slot after its
// slot began. Only queues that keep finished jobs have it.
func (k Keys) Runtimes(queue string, slot int64) string {
	return k.prefix + ":{" + queue + "}:runtimes:" + strconv.FormatInt(slot, 10)
}

// Workflow returns the keys of workflow id, all in one slot, in the
// order the wf_*.lua scripts take them (lib/workflow.lua):
//
//	meta      HASH  state, counts, policy, deadline, retention, times
//	state     HASH  step -> its state (one letter)
//	left      HASH  step -> its parents not ended yet
//	kids      HASH  step -> its dependents, joined by commas
//	parents   HASH  step -> the parents it needs, ";", those it waits for
//	jobs      HASH  step -> its job (an encoded envelope and delay)
//	results   HASH  step -> its result
//	mayfail   SET   the steps whose failure the workflow survives
//	spawned   HASH  spawned step -> the attempt of its spawner
//
// They have no lifetime while the workflow runs, and its retention once
// it ends.
//
// The slot is {wf:<id>}, but for a workflow whose ID begins with its
// home queue in braces ("{<queue>}<rest>", WorkflowHome): its keys are
// then "<prefix>:{<queue>}<rest>:<name>", in the slot of that queue's
// keys, so that a script of the queue can settle one of its steps in the
// same call as its ack (step_ack.lua).
func (k Keys) Workflow(id string) []string {
	base := k.prefix + ":{wf:" + id + "}:"
	if _, ok := WorkflowHome(id); ok {
		base = k.prefix + ":" + id + ":"
	}
	names := [...]string{"meta", "state", "left", "kids", "parents", "jobs", "results", "mayfail", "spawned"}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = base + n
	}
	return out
}

// WorkflowStates returns the key of workflow id's hash of step states,
// the second of Workflow's.
func (k Keys) WorkflowStates(id string) string { return k.Workflow(id)[1] }

// WorkflowBuild returns the keys a wide workflow's steps are stored
// under in parts before it is created (wf_build.lua), in the order of
// Workflow's and in the same slot: "<workflow key>:build" each. They
// expire unless wf_create.lua renames them to the workflow's.
func (k Keys) WorkflowBuild(id string) []string {
	out := k.Workflow(id)
	for i := range out {
		out[i] += ":build"
	}
	return out
}

// WorkflowHome returns the home queue of workflow id: the queue whose
// slot its keys share, named in braces at the start of the ID
// ("{emails}01J…"); ok is false for an ID that names none.
func WorkflowHome(id string) (queue string, ok bool) {
	if len(id) < 3 || id[0] != '{' {
		return "", false
	}
	end := strings.IndexByte(id, '}')
	if end < 2 || end == len(id)-1 {
		return "", false
	}
	return id[1:end], true
}
