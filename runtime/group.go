package runtime

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// GroupedJob is a job that belongs to a fair group of its queue: its
// tenant, customer or API token. Generated code implements it for a
// type annotated `//job:group=Field`. The queue hands out the jobs of
// its groups in turn, one per group, so that a group with many waiting
// jobs holds up no other; within a group, jobs run in dispatch order.
// With JobOptions.GroupLimit, at most that many jobs of one group run
// at once, across all workers (docs/flow-control.md).
type GroupedJob interface {
	Job
	// JobGroup is the job's group; "" puts it in no group.
	JobGroup() string
}

// The envelope headers that carry a job's group and its limit, through
// releases, retries, chains and the failed store.
const (
	GroupHeader      = "jobgen-group"
	GroupLimitHeader = "jobgen-group-limit"
)

// MaxGroupLen is the longest group name, in bytes.
const MaxGroupLen = 1000

// ValidateGroup reports why name cannot be a group: it is longer than
// MaxGroupLen bytes or holds a NUL byte. The error wraps ErrInvalid.
func ValidateGroup(name string) error {
	if len(name) > MaxGroupLen {
		return fmt.Errorf("%w: group %.40q... is %d bytes, more than %d", ErrInvalid, name, len(name), MaxGroupLen)
	}
	if strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("%w: group %q holds a NUL byte", ErrInvalid, name)
	}
	return nil
}

// GroupKey returns v as a group name: generated JobGroup methods call it
// on the field that `group=` names.
func GroupKey[T ~string | ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr](v T) string {
	return fmt.Sprint(v)
}

// Group returns the job's group, "" for none.
func (e *Envelope) Group() string { return e.Headers[GroupHeader] }

// GroupLimit returns the most jobs of the job's group that may run at
// once, 0 for no limit.
func (e *Envelope) GroupLimit() int {
	n, _ := strconv.Atoi(e.Headers[GroupLimitHeader])
	return max(n, 0)
}

// setGroup puts the job in group with limit (0: none); group "" takes it
// out of any.
func (e *Envelope) setGroup(group string, limit int) {
	if group == "" {
		delete(e.Headers, GroupHeader)
		delete(e.Headers, GroupLimitHeader)
		return
	}
	if e.Headers == nil {
		e.Headers = map[string]string{}
	}
	e.Headers[GroupHeader] = group
	if limit > 0 {
		e.Headers[GroupLimitHeader] = strconv.Itoa(limit)
	} else {
		delete(e.Headers, GroupLimitHeader)
	}
}

// groupArg is the "<limit>:<group>" the scripts take, "" for a job of
// no group.
func (e *Envelope) groupArg() string {
	g := e.Group()
	if g == "" {
		return ""
	}
	return strconv.Itoa(e.GroupLimit()) + ":" + g
}

// groupOfJob returns the group and limit job's own methods give it.
func groupOfJob(job Job) (string, int) {
	g, ok := underlying(job).(GroupedJob)
	if !ok {
		return "", 0
	}
	return g.JobGroup(), job.JobOptions().GroupLimit
}

// OnGroup puts the job in group, overriding its annotation: the queue
// hands out its groups' jobs in turn, and with a GroupLimit runs at
// most that many of one group at once. "" takes it out of any group.
func (p *PendingDispatch) OnGroup(group string) *PendingDispatch {
	p.group, p.groupSet = group, true
	return p
}

// WithGroupLimit sets the most jobs of the job's group that run at once,
// overriding its annotation (0: no limit). It has no effect on a job of
// no group.
func (p *PendingDispatch) WithGroupLimit(n int) *PendingDispatch {
	p.groupLimit, p.groupLimitSet = n, true
	return p
}

// Group returns the group the job is dispatched in ("" for none) and
// its limit: the job's own (GroupedJob and its GroupLimit option), or
// what OnGroup and WithGroupLimit set for this dispatch.
func (p *PendingDispatch) Group() (group string, limit int) {
	group, limit = groupOfJob(p.job)
	if p.groupSet {
		group = p.group
	}
	if p.groupLimitSet {
		limit = p.groupLimit
	}
	return group, limit
}

// applyGroup sets env's group from p's overrides.
func (p *PendingDispatch) applyGroup(env *Envelope) error {
	if !p.groupSet && !p.groupLimitSet {
		return nil
	}
	g, limit := env.Group(), env.GroupLimit()
	if p.groupSet {
		g = p.group
	}
	if p.groupLimitSet {
		if p.groupLimit < 0 {
			return fmt.Errorf("%w: job %s: group limit %d is negative", ErrInvalid, env.Name, p.groupLimit)
		}
		limit = p.groupLimit
	}
	if err := ValidateGroup(g); err != nil {
		return fmt.Errorf("job %s: %w", env.Name, err)
	}
	env.setGroup(g, limit)
	return nil
}

// groupedQueues are the queues an engine has seen grouped jobs in: its
// settles of their jobs pass the group keys (lib/groups.lua), and no
// other queue's do.
type groupedQueues struct{ m sync.Map }

func (g *groupedQueues) add(queue string) {
	if _, ok := g.m.Load(queue); !ok {
		g.m.Store(queue, true)
	}
}

func (g *groupedQueues) has(queue string) bool {
	_, ok := g.m.Load(queue)
	return ok
}

// tagsKey is how an encoded envelope names its tags (Envelope.Tags,
// msgpack "tg", a fixstr of 2): an envelope without those bytes has no
// tags, so most payloads are not decoded to learn it.
var tagsKey = []byte("\xa2tg")

// storedGroupAndTags returns the "<limit>:<group>" of a stored payload
// ("" for a job of no group, for a push that has only the payload: the
// outbox relay) and the tags of a stored envelope, decoding it only when its bytes may
// hold either.
func storedGroupAndTags(queue, id string, payload []byte) (string, []string) {
	if !bytes.Contains(payload, []byte(GroupHeader)) && !bytes.Contains(payload, tagsKey) {
		return "", nil
	}
	env, err := DecodeEnvelope(queue, id, payload)
	if err != nil {
		return "", nil
	}
	return env.groupArg(), env.Tags
}
