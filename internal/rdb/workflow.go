package rdb

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobgen/jobgen/runtime/lua"
)

// Workflows: the graph of a workflow's steps, in its own slot (the
// wf_*.lua scripts, lib/workflow.lua). The runtime decides what a step's
// end means; these calls store it and say which steps are released.

var (
	scriptWfCreate = lua.Get("wf_create")
	scriptWfBuild  = lua.Get("wf_build")
	scriptWfSettle = lua.Get("wf_settle")
	scriptWfSpawn  = lua.Get("wf_spawn")
	scriptWfCancel = lua.Get("wf_cancel")
	scriptWfRetry  = lua.Get("wf_retry")
	scriptStepAck  = lua.Get("step_ack")
	scriptStepRel  = lua.Get("step_release")
)

// WfStep is a step as the workflow stores it.
type WfStep struct {
	ID      string
	Job     []byte
	Needs   string // need parents, joined by commas
	Waits   string // wait-only parents, joined by commas
	MayFail bool
	// Push is the job ID of a step whose parent's ack may push it as it
	// stands (step_ack.lua): one parent, no results needed, no delay, no
	// group or tags, on its workflow's home queue; Job is then the
	// payload to store. "" for any other step.
	Push string
}

func (s WfStep) args() []any {
	f := ""
	if s.MayFail {
		f = "1"
	}
	return []any{s.ID, s.Job, s.Needs, s.Waits, f}
}

// WfRelease is a step released to run: its job, and the results of the
// steps it needs, in order (nil for none). A step that needs more than
// 1,000 results is released without them, and Read set: it reads them
// when it runs (WfNeeded).
type WfRelease struct {
	ID      string
	Job     []byte
	Results [][]byte
	Read    bool
}

// WfOutcome is what a workflow call did.
type WfOutcome struct {
	// State is the workflow's state after the call: run, ok, failed,
	// cancelled, or gone.
	State string
	// What is what the call did (the scripts' second reply).
	What string
	// Released are steps to push; Cancel, steps to take out of their
	// queues or cancel.
	Released []WfRelease
	Cancel   []WfRelease
}

// WfCreate creates workflow id with steps, or finds it made before.
// notAfter, if not 0, is a Redis time in ms past which it writes and
// returns nothing, failing with "LATE <now> <notAfter>".
//
// A workflow of more than WfPartSteps steps, or WfPartParents parents
// named in all, is stored in parts first (WfBuild), then created from
// them: no call holds Redis for the whole graph.
func (s *Store) WfCreate(ctx context.Context, id, policy string, deadlineMs, retentionMs int64, catch []byte, notAfter int64, steps []WfStep) (created bool, released []WfRelease, err error) {
	head := []any{policy, deadlineMs, retentionMs, catch, notAfter}
	if !wfWide(steps) {
		args := head
		for _, st := range steps {
			args = append(args, st.args()...)
			args = append(args, st.Push)
		}
		v, err := s.RunOne(ctx, Call{Script: scriptWfCreate, Keys: s.keys.Workflow(id), Args: args}).Slice()
		if err != nil {
			return false, nil, err
		}
		rel, err := releases(v[1:])
		return Int(v[0]) == 1, rel, err
	}
	n, sum, err := s.WfBuild(ctx, id, steps, notAfter)
	if err != nil {
		return false, nil, err
	}
	keys := s.keys.Workflow(id)
	v, err := s.RunOne(ctx, Call{Script: scriptWfCreate, Keys: append(keys, s.keys.WorkflowBuild(id)...), Args: append(head, n, sum)}).Slice()
	if err != nil {
		return false, nil, err
	}
	if Int(v[0]) == 0 { // created before: what it released and did not end
		rel, err := releases(v[1:])
		return false, rel, err
	}
	for _, st := range steps {
		if st.Needs == "" && st.Waits == "" {
			released = append(released, WfRelease{ID: st.ID, Job: st.Job})
		}
	}
	return true, released, nil
}

// WfBuild stores the steps of workflow id in parts (wf_build.lua), a
// call each, in one round trip, and returns the number of parts and the
// steps' digest, for WfCreate to create the workflow from them. Parts
// stored before, of the same steps, are skipped; a workflow created
// already stores none. (WfCreate comes after that round trip, not in it:
// a part sent again for NOSCRIPT would come after it.)
func (s *Store) WfBuild(ctx context.Context, id string, steps []WfStep, notAfter int64) (parts int, sum string, err error) {
	split := wfParts(wfEntries(steps))
	sum = wfDigest(steps)
	keys := append(s.keys.WorkflowBuild(id), s.keys.Workflow(id)[0])
	calls := make([]Call, len(split))
	for i, p := range split {
		args := []any{sum, i, wfBuildTTL.Milliseconds(), notAfter}
		for _, e := range p {
			args = append(args, e.args[:]...)
		}
		calls[i] = Call{Script: scriptWfBuild, Keys: keys, Args: args}
	}
	replies, _ := s.Run(ctx, calls)
	for i, r := range replies {
		if err := r.Err(); err != nil {
			return 0, "", fmt.Errorf("store part %d of %d: %w", i+1, len(split), err)
		}
	}
	return len(split), sum, nil
}

// The bounds of a part of a wide workflow (wf_build.lua): up to
// WfPartSteps entries naming up to WfPartParents parents in all. A step
// with more parents is an entry of its own, and its parents' lists of
// dependents gain it by link entries, WfPartParents parents each.
const (
	WfPartSteps   = 500
	WfPartParents = 2000
)

// wfBuildTTL is how long the parts of a workflow not created yet are
// kept: a dispatch that fails part way leaves them for this long.
const wfBuildTTL = 15 * time.Minute

// wfWide says whether steps are stored in parts: more than a part holds.
func wfWide(steps []WfStep) bool {
	if len(steps) > WfPartSteps {
		return true
	}
	named := 0
	for _, st := range steps {
		named += wfNamed(st.Needs) + wfNamed(st.Waits)
	}
	return named > WfPartParents
}

// wfEntry is an entry of a part (lib/workflow_build.lua): a step, or a
// link entry of a step with more parents than a part names; weight is
// the parents it names.
type wfEntry struct {
	args   [6]any
	weight int
}

// wfEntries returns the entries steps are stored as.
func wfEntries(steps []WfStep) []wfEntry {
	out := make([]wfEntry, 0, len(steps))
	for _, st := range steps {
		flags := ""
		if st.MayFail {
			flags = "1"
		}
		named := wfNamed(st.Needs) + wfNamed(st.Waits)
		var uniq []string
		if named > WfPartParents {
			seen := make(map[string]bool, named)
			for _, list := range []string{st.Needs, st.Waits} {
				for _, p := range strings.Split(list, ",") {
					if p != "" && !seen[p] {
						seen[p] = true
						uniq = append(uniq, p)
					}
				}
			}
		}
		if len(uniq) <= WfPartParents {
			out = append(out, wfEntry{args: [6]any{st.ID, st.Job, st.Needs, st.Waits, flags, st.Push}, weight: named})
			continue
		}
		out = append(out, wfEntry{args: [6]any{st.ID, st.Job, st.Needs, st.Waits, flags + "-" + strconv.Itoa(len(uniq)), st.Push}, weight: 1})
		for i := 0; i < len(uniq); i += WfPartParents {
			link := uniq[i:min(i+WfPartParents, len(uniq))]
			out = append(out, wfEntry{args: [6]any{st.ID, "", strings.Join(link, ","), "", "+", ""}, weight: len(link)})
		}
	}
	return out
}

// wfParts splits entries into the parts they are stored in.
func wfParts(entries []wfEntry) [][]wfEntry {
	var parts [][]wfEntry
	start, named := 0, 0
	for i, e := range entries {
		if i > start && (i-start == WfPartSteps || named+e.weight > WfPartParents) {
			parts = append(parts, entries[start:i])
			start, named = i, 0
		}
		named += e.weight
	}
	return append(parts, entries[start:])
}

// wfNamed is the number of parents in a list joined by commas.
func wfNamed(list string) int {
	if list == "" {
		return 0
	}
	return strings.Count(list, ",") + 1
}

// wfDigest is the digest of steps, as wf_build.lua keeps it to tell one
// graph from another under the same workflow ID.
func wfDigest(steps []WfStep) string {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, st := range steps {
		field([]byte(st.ID))
		field(st.Job)
		field([]byte(st.Needs))
		field([]byte(st.Waits))
		field([]byte(st.Push))
		if st.MayFail {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// WfEnd is the end of one step's run, for WfSettle: How is s
// (succeeded), f (failed for good) or r (look only; see wf_settle.lua).
type WfEnd struct {
	Step    string
	How     string
	Attempt int
	Result  []byte
	Why     string
}

// WfSettle records the ends of steps of workflow id, in order, and
// returns each one's outcome.
func (s *Store) WfSettle(ctx context.Context, id string, ends []WfEnd) ([]WfOutcome, error) {
	out, err := s.WfSettleMany(ctx, []string{id}, [][]WfEnd{ends})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// WfSettleMany records the ends of steps of several workflows, ends[i]
// of workflow ids[i], in one pipeline of a script call a workflow (of up
// to 500 ends each), and returns each end's outcome, in the same shape.
// Its error is the first call's; a call that failed leaves its
// workflow's outcomes nil.
func (s *Store) WfSettleMany(ctx context.Context, ids []string, ends [][]WfEnd) ([][]WfOutcome, error) {
	var calls []Call
	var owner []int // the index in ids of each call
	for i, id := range ids {
		for k := 0; k < len(ends[i]); k += 500 {
			chunk := ends[i][k:min(k+500, len(ends[i]))]
			args := make([]any, 0, 5*len(chunk))
			for _, e := range chunk {
				args = append(args, e.Step, e.How, e.Attempt, e.Result, e.Why)
			}
			calls = append(calls, Call{Script: scriptWfSettle, Keys: s.keys.Workflow(id), Args: args})
			owner = append(owner, i)
		}
	}
	replies, err := s.Run(ctx, calls)
	out := make([][]WfOutcome, len(ids))
	var first error
	for c, r := range replies {
		i := owner[c]
		v, rerr := r.Slice()
		if rerr == nil {
			for _, one := range v {
				o, perr := outcome(anySlice(one))
				if perr != nil {
					rerr = perr
					break
				}
				out[i] = append(out[i], o)
			}
		}
		if rerr != nil {
			out[i] = nil
			if first == nil {
				first = rerr
			}
		}
	}
	if first == nil {
		first = err
	}
	return out, first
}

func anySlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// WfSpawn adds steps spawned by spawner's attempt. dropped reports a
// spawner that no longer runs: nothing was added.
func (s *Store) WfSpawn(ctx context.Context, id, spawner string, attempt, most int, steps []WfStep) (dropped bool, err error) {
	args := []any{spawner, attempt, most}
	for _, st := range steps {
		args = append(args, st.args()...)
	}
	v, err := s.RunOne(ctx, Call{Script: scriptWfSpawn, Keys: s.keys.Workflow(id), Args: args}).Slice()
	if err != nil {
		return false, err
	}
	return fmt.Sprint(v[0]) == "dropped", nil
}

// WfCancel ends a running workflow: kind is cancel, or deadline.
func (s *Store) WfCancel(ctx context.Context, id, kind string) (WfOutcome, error) {
	v, err := s.RunOne(ctx, Call{Script: scriptWfCancel, Keys: s.keys.Workflow(id), Args: []any{kind}}).Slice()
	if err != nil {
		return WfOutcome{}, err
	}
	return outcome(v)
}

// WfRetry runs the given steps of a failed or cancelled workflow again
// with new jobs (ID -> job, in pairs).
func (s *Store) WfRetry(ctx context.Context, id string, pairs []any) (ok bool, why string, released []WfRelease, err error) {
	v, err := s.RunOne(ctx, Call{Script: scriptWfRetry, Keys: s.keys.Workflow(id), Args: pairs}).Slice()
	if err != nil {
		return false, "", nil, err
	}
	if fmt.Sprint(v[0]) != "ok" {
		return false, fmt.Sprint(v[1]), nil, nil
	}
	rel, err := releases(v[1:])
	return true, "", rel, err
}

// WfRead is a workflow as stored.
type WfRead struct {
	Meta    map[string]string
	State   map[string]string
	Parents map[string]string
	Jobs    map[string]string
	Sizes   map[string]int64 // step -> its result's size, when asked for
	Results []string         // the steps with a result
	MayFail []string
}

// WfGet reads workflow id: every step's state, parents and job, the
// steps with a result, and if sizes, the sizes of those results (one
// HSTRLEN each; without sizes it is six commands, whatever the number
// of steps). Meta is empty for a workflow that is not there.
func (s *Store) WfGet(ctx context.Context, id string, sizes bool) (*WfRead, error) {
	k := s.keys.Workflow(id)
	p := s.c.Pipeline()
	meta := p.HGetAll(ctx, k[0])
	state := p.HGetAll(ctx, k[1])
	par := p.HGetAll(ctx, k[4])
	jobs := p.HGetAll(ctx, k[5])
	res := p.HKeys(ctx, k[6])
	cont := p.SMembers(ctx, k[7])
	if _, err := p.Exec(ctx); err != nil && !IsNil(err) {
		return nil, err
	}
	out := &WfRead{Meta: meta.Val(), State: state.Val(), Parents: par.Val(), Jobs: jobs.Val(), MayFail: cont.Val(), Sizes: map[string]int64{}, Results: res.Val()}
	if names := res.Val(); sizes && len(names) > 0 {
		p := s.c.Pipeline()
		lens := make([]*redis.IntCmd, len(names))
		for i, n := range names {
			lens[i] = p.HStrLen(ctx, k[6], n)
		}
		if _, err := p.Exec(ctx); err != nil {
			return nil, err
		}
		for i, n := range names {
			out.Sizes[n] = lens[i].Val()
		}
	}
	return out, nil
}

// WfCatch reads the encoded catch callback of workflow id, nil for none.
func (s *Store) WfCatch(ctx context.Context, id string) ([]byte, error) {
	b, err := s.c.HGet(ctx, s.keys.Workflow(id)[0], "cb").Bytes()
	if IsNil(err) {
		return nil, nil
	}
	return b, err
}

// WfCaught marks workflow id's catch as run; caught reports whether it
// had been.
func (s *Store) WfCaught(ctx context.Context, id string) (caught bool, err error) {
	n, err := s.c.HSetNX(ctx, s.keys.Workflow(id)[0], "caught", "1").Result()
	return !n, err
}

// WfWhy reads why workflow id failed.
func (s *Store) WfWhy(ctx context.Context, id string) (string, error) {
	v, err := s.c.HGet(ctx, s.keys.Workflow(id)[0], "why").Result()
	if IsNil(err) {
		return "", nil
	}
	return v, err
}

// WfResults reads the results of steps of workflow id, nil for none.
func (s *Store) WfResults(ctx context.Context, id string, steps []string) ([][]byte, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	v, err := s.c.HMGet(ctx, s.keys.Workflow(id)[6], steps...).Result()
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(v))
	for i, x := range v {
		if b, ok := x.(string); ok {
			out[i] = []byte(b)
		}
	}
	return out, nil
}

// WfNeeded reads the results step of workflow id needs, in order (nil
// for a parent that left none), 1,000 a command in one round trip, for a
// step released without them (WfRelease.Read). found is false when the
// workflow no longer has the step: it ended, and its keys expired.
func (s *Store) WfNeeded(ctx context.Context, id, step string) (results [][]byte, found bool, err error) {
	k := s.keys.Workflow(id)
	p, err := s.c.HGet(ctx, k[4], step).Result()
	if IsNil(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	needs, _, _ := strings.Cut(p, ";")
	if needs == "" {
		return nil, true, nil
	}
	ids := strings.Split(needs, ",")
	cmds := make([]*redis.SliceCmd, 0, (len(ids)+999)/1000)
	_, err = s.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i := 0; i < len(ids); i += 1000 {
			cmds = append(cmds, pipe.HMGet(ctx, k[6], ids[i:min(i+1000, len(ids))]...))
		}
		return nil
	})
	if err != nil {
		return nil, true, err
	}
	results = make([][]byte, 0, len(ids))
	for _, c := range cmds {
		for _, x := range c.Val() {
			var b []byte
			if v, ok := x.(string); ok {
				b = []byte(v)
			}
			results = append(results, b)
		}
	}
	return results, true, nil
}

func outcome(v []any) (WfOutcome, error) {
	if len(v) < 2 {
		return WfOutcome{}, fmt.Errorf("workflow reply of %d values", len(v))
	}
	o := WfOutcome{State: text(v[0]), What: text(v[1])}
	var err error
	switch o.What {
	case "failed":
		o.Cancel, err = pairs(v[2:])
	case "ended", "again", "wait", "part":
		o.Released, err = releases(v[2:])
	}
	return o, err
}

func pairs(v []any) ([]WfRelease, error) {
	if len(v)%2 != 0 {
		return nil, fmt.Errorf("workflow reply: %d values do not make pairs", len(v))
	}
	out := make([]WfRelease, 0, len(v)/2)
	for i := 0; i < len(v); i += 2 {
		out = append(out, WfRelease{ID: text(v[i]), Job: bytesOf(v[i+1])})
	}
	return out, nil
}

func releases(v []any) ([]WfRelease, error) {
	var out []WfRelease
	for i := 0; i < len(v); {
		if i+3 > len(v) {
			return nil, fmt.Errorf("workflow reply: a release cut short at %d of %d values", i, len(v))
		}
		r := WfRelease{ID: text(v[i]), Job: bytesOf(v[i+1])}
		n := int(Int(v[i+2]))
		i += 3
		if n == -1 {
			r.Read = true
			out = append(out, r)
			continue
		}
		if n < 0 {
			return nil, fmt.Errorf("workflow reply: step %s has %d results", r.ID, n)
		}
		if i+n > len(v) {
			return nil, fmt.Errorf("workflow reply: step %s has %d results, %d values left", r.ID, n, len(v)-i)
		}
		r.Results = make([][]byte, n)
		for k := 0; k < n; k++ {
			r.Results[k] = bytesOf(v[i+k])
		}
		i += n
		out = append(out, r)
	}
	return out, nil
}

// text returns a reply's string, as the scripts' replies carry them.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func bytesOf(v any) []byte {
	if s, ok := v.(string); ok {
		return []byte(s)
	}
	return nil
}

// MarkPushed sets a step's push marker (keyspace Chained) for ttl unless
// it is set, and reports whether this call set it: a step_push.lua made
// after it pushes nothing for that step.
func (s *Store) MarkPushed(ctx context.Context, marker string, ttl time.Duration) (bool, error) {
	return s.c.SetNX(ctx, marker, "1", ttl).Result()
}

// StepEnd is the success of a step, whose job StepAck acks: the job's
// ID and reservation token, its workflow, and its end.
type StepEnd struct {
	ID, Token, Workflow string
	End                 WfEnd
}

// StepAcked is what StepAck did for one job: Stale, nothing (the token
// was stale); Acked, its end recorded and its job acked; otherwise its
// end recorded and its job left for the caller to ack once it has done
// what Outcome asks: push what it released, cancel what a failed
// workflow leaves, or, for "part", release the rest of its dependents
// (StepRelease).
type StepAcked struct {
	Stale, Acked bool
	// Pushed: the steps Outcome lists as released were pushed by the call
	// (StepAck with tell).
	Pushed  bool
	Outcome WfOutcome
}

// pushFlag is the flag of step_ack and step_release: "0" if the call is
// not to push released steps, "1" if it may, "2" if it may and is to
// list them.
func pushFlag(push, tell bool) string {
	switch {
	case push && tell:
		return "2"
	case push:
		return "1"
	}
	return "0"
}

// StepRelease releases the next part of the dependents of step, whose
// end released them in parts (WfOutcome.What "part"), in workflow wf
// that keeps its keys in queue's slot (step_release.lua). With push, the
// steps it may push as they stand are pushed onto queue in the call;
// with tell too, the outcome lists them and pushed is true. Otherwise
// the outcome lists the released steps for the caller to push. A
// workflow in a slot of its own has queue "": the call pushes nothing.
// The caller calls it again while the outcome's What is "part".
func (s *Store) StepRelease(ctx context.Context, queue, wf, step string, push, tell bool) (o WfOutcome, pushed bool, err error) {
	keys, flag := s.keys.Workflow(wf), pushFlag(push, tell)
	if queue != "" {
		qk := s.keys.Queue(queue)
		keys = append(keys, qk.Ready, qk.Delayed, qk.Payloads, qk.Notify)
	} else {
		flag = "0"
	}
	v, err := s.RunOne(ctx, Call{Script: scriptStepRel, Keys: keys, Args: []any{flag, step}}).Slice()
	if err != nil {
		return WfOutcome{}, false, err
	}
	if len(v) != 2 {
		return WfOutcome{}, false, fmt.Errorf("step_release: a reply of %d values", len(v))
	}
	o, err = outcome(anySlice(v[1]))
	return o, Int(v[0]) == 1, err
}

// StepAck records the success of steps run on queue, whose workflows
// keep their keys in its slot, and acks their jobs, in one script call
// of up to 500 jobs (step_ack.lua); more go in further calls, in one
// pipeline. Its error is the first call's.
//
// With push, a step whose end releases only steps its call may push as
// they stand (WfStep.Push) has them pushed onto queue in the same call,
// and is acked; with tell too, its StepAcked lists them, Pushed.
func (s *Store) StepAck(ctx context.Context, queue string, push, tell bool, ends []StepEnd) ([]StepAcked, error) {
	qk := s.keys.Queue(queue)
	flag := pushFlag(push, tell)
	var calls []Call
	for k := 0; k < len(ends); k += 500 {
		chunk := ends[k:min(k+500, len(ends))]
		keys := []string{qk.Reserved, qk.State, qk.Errors}
		index := map[string]int{}
		args := make([]any, 0, 1+6*len(chunk))
		args = append(args, flag)
		for _, e := range chunk {
			w, ok := index[e.Workflow]
			if !ok {
				w = len(index) + 1
				index[e.Workflow] = w
				keys = append(keys, s.keys.Workflow(e.Workflow)...)
			}
			args = append(args, w, e.ID, e.Token, e.End.Step, e.End.Attempt, e.End.Result)
		}
		keys = append(keys, qk.Ready, qk.Delayed, qk.Payloads, qk.Notify)
		calls = append(calls, Call{Script: scriptStepAck, Keys: keys, Args: args})
	}
	replies, err := s.Run(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := make([]StepAcked, 0, len(ends))
	for _, r := range replies {
		v, err := r.Slice()
		if err != nil {
			return nil, err
		}
		for _, one := range v {
			if n, ok := one.(int64); ok && n == 1 { // acked, the workflow running on
				out = append(out, StepAcked{Acked: true, Outcome: WfOutcome{State: "run", What: "ended"}})
				continue
			}
			p := anySlice(one)
			if len(p) == 0 {
				return nil, fmt.Errorf("step_ack: an empty reply")
			}
			code := Int(p[0])
			a := StepAcked{Stale: code == 0, Acked: code == 1 || code == 3, Pushed: code == 3 || code == 4}
			if !a.Stale {
				if len(p) < 2 {
					return nil, fmt.Errorf("step_ack: a reply of code %d without its outcome", Int(p[0]))
				}
				if a.Outcome, err = outcome(anySlice(p[1])); err != nil {
					return nil, err
				}
			}
			out = append(out, a)
		}
	}
	if len(out) != len(ends) {
		return nil, fmt.Errorf("step_ack: %d replies for %d jobs", len(out), len(ends))
	}
	return out, nil
}
