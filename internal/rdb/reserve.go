package rdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jobgen/jobgen/runtime/lua"
)

// Reserving jobs: the migrate and reserve scripts, and the waiting
// pipeline's reserve behind a BLPOP.

var (
	scriptMigrate = lua.Get("migrate")
	scriptReserve = lua.Get("reserve")
)

// Migrated is what one migrate did, as reserve replies carry it too.
// Its fields are those of runtime.Migration, in the same order.
type Migrated struct {
	Now        time.Time // the Redis clock, to the microsecond
	Delayed    int       // delayed jobs moved to ready
	Expired    int       // expired reservations moved to ready
	NextDue    time.Time
	NextExpiry time.Time
}

// Migrate moves up to limit due delayed jobs and up to limit expired
// reservations of queue back to ready.
func (s *Store) Migrate(ctx context.Context, queue string, limit int) (Migrated, error) {
	qk := s.keys.Queue(queue)
	v, err := Call{Script: scriptMigrate, Keys: []string{qk.Ready, qk.Delayed, qk.Reserved, qk.State, qk.Notify}, Args: []any{limit}}.Run(ctx, s.c).Int64Slice()
	if err != nil {
		return Migrated{}, err
	}
	if len(v) != 6 {
		return Migrated{}, fmt.Errorf("migrate: unexpected reply %v", v)
	}
	return migratedOf(v[0], v[1:]), nil
}

// migratedOf reads what migrate did at now ms: the fields of its reply
// after now (lib/migrate_due.lua's four, and the µs past now).
func migratedOf(now int64, f []int64) Migrated {
	return Migrated{
		Now:     msTime(now).Add(time.Duration(f[4]) * time.Microsecond),
		Delayed: int(f[0]), Expired: int(f[1]),
		NextDue: msTime(f[2]), NextExpiry: msTime(f[3]),
	}
}

// msTime converts unix ms to a time; -1 or 0 gives the zero time.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// Reserve is one reserve call: up to N jobs of Queue, after migrating it.
type Reserve struct {
	Queue string
	N     int
	// Lease is the lease in ms.
	Lease int64
	// Token is the reservation's token; a held reservation's jobs get it
	// with HeldPrefix in front.
	Token string
	// Hold reserves the jobs held: their attempts are not counted until
	// Start.
	Hold bool
	// Calls is the queue's calls hash, and RetryWindow how long in ms the
	// scripts keep it (0 for none).
	Calls       string
	RetryWindow int64
	// MigrateLimit bounds the migrate the script does first.
	MigrateLimit int
}

// HeldPrefix starts the token of a held reservation (reserve.lua).
const HeldPrefix = "h"

// call is the reserve script call.
func (r *Reserve) call(s *Store) Call {
	qk := s.keys.Queue(r.Queue)
	args := []any{r.N, r.Lease, r.Token, r.RetryWindow, r.MigrateLimit}
	if r.Hold {
		args = append(args, "1")
	}
	keys := []string{qk.Ready, qk.Reserved, qk.Payloads, qk.State, qk.Notify, qk.Paused, r.Calls, qk.Delayed, qk.Settings,
		qk.GroupOf, qk.GroupWait, qk.GroupRing, qk.GroupActive, qk.GroupSeq, qk.GroupRunning}
	return Call{Script: scriptReserve, Keys: keys, Args: args}
}

// Reserved is the reply of a reserve call: its head, and its jobs, read
// one at a time (Job).
type Reserved struct {
	// Now is the Redis clock in ms, and Until the lease deadline.
	Now, Until time.Time
	// Migrated is what the migrate before the reserve did.
	Migrated Migrated
	// Limited says the queue has a concurrency limit.
	Limited bool
	// Open is when the queue's rate lets more jobs through, if it held
	// this reserve back; zero if not.
	Open time.Time

	reply []any
}

// reserveHead is the length of a reserve reply before its jobs: now,
// the lease deadline, what its migrate did (the fields of a migrate
// reply after its now), whether the queue has a concurrency limit, and
// when its rate lets more jobs through.
const reserveHead = 9

// Len is the number of jobs reserved.
func (r *Reserved) Len() int { return (len(r.reply) - reserveHead) / 4 }

// ReservedJob is one job of a reserve reply.
type ReservedJob struct {
	ID         string
	Attempts   int
	Exceptions int
	Payload    []byte
	// Malformed says the job's state entry was malformed: Attempts and
	// Exceptions are 0, Entry is the entry as found, and the job is
	// reserved under the plain token even when held.
	Malformed bool
	Entry     string
}

// Job returns job i, from 0 to Len()-1.
func (r *Reserved) Job(i int) ReservedJob {
	f := r.reply[reserveHead+4*i:]
	id, _ := f[0].(string)
	payload, _ := f[3].(string)
	j := ReservedJob{ID: id, Attempts: int(Int(f[1])), Payload: []byte(payload)}
	if j.Attempts == 0 {
		// reserve.lua marks a malformed state entry so, with the entry in
		// place of the exceptions when it has it.
		j.Malformed = true
		j.Entry, _ = f[2].(string)
	} else {
		j.Exceptions = int(Int(f[2]))
	}
	return j
}

// parseReserved reads a reserve reply.
func parseReserved(cmd Reply) (Reserved, error) {
	reply, err := cmd.Slice()
	if err != nil {
		return Reserved{}, err
	}
	if len(reply) < reserveHead || (len(reply)-reserveHead)%4 != 0 {
		return Reserved{}, fmt.Errorf("unexpected reply of %d values", len(reply))
	}
	var f [reserveHead - 4]int64
	for i := range f {
		f[i] = Int(reply[2+i])
	}
	return Reserved{
		Now:      msTime(Int(reply[0])),
		Until:    msTime(Int(reply[1])),
		Migrated: migratedOf(Int(reply[0]), f[:]),
		Limited:  Int(reply[reserveHead-2]) == 1,
		Open:     msTime(Int(reply[reserveHead-1])),
		reply:    reply,
	}, nil
}

// Reserve runs one reserve call.
func (s *Store) Reserve(ctx context.Context, r Reserve) (Reserved, error) {
	return parseReserved(r.call(s).Run(ctx, s.c))
}

// WaitReserve is WaitRun with one reserve call behind the BLPOP on
// keys: the reserve runs the moment the BLPOP returns, whether a key
// had an element or the timeout passed. It returns the reserve's reply
// (err, its error), the key the BLPOP took an element from, and the
// BLPOP's own error.
func (s *Store) WaitReserve(ctx context.Context, keys []string, timeout time.Duration, r Reserve) (got Reserved, popped string, waitErr, err error) {
	cmds, popped, waitErr := s.WaitRun(ctx, keys, timeout, []Call{r.call(s)})
	if err = cmds[0].Err(); err == nil {
		got, err = parseReserved(cmds[0])
	}
	return got, popped, waitErr, err
}
