package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Job is what every benchmark job carries, whatever the system: a
// sequence number, so that each phase counts duplicates and missing jobs,
// a time in unix nanoseconds (when it was dispatched, or for a delayed
// job when it falls due), and filler that brings the job's data up to the
// payload size. Each system encodes it in its own usual way.
type Job struct {
	Seq int64
	At  int64
	Pad string
}

// Handler is called by a system's worker at the start of each job's
// handler, with the job's sequence number and time.
type Handler func(seq, at int64)

// System is one job queue under test. Every method but Start and Stop is
// called from several goroutines at once.
type System interface {
	// Enqueue sends one job, ready now, with the system's single-job API.
	Enqueue(ctx context.Context, j Job) error
	// EnqueueDelayed sends one job to become ready after delay.
	EnqueueDelayed(ctx context.Context, j Job, delay time.Duration) error
	// EnqueueBatch sends jobs with the system's batch API, or one by one
	// where it has none (Info.BulkMode says which).
	EnqueueBatch(ctx context.Context, jobs []Job) error
	// Start starts workers that run concurrency handlers at once, each
	// calling h.
	Start(concurrency int, h Handler) error
	// Stop stops the workers and waits for them.
	Stop() error
	// Close releases the system's clients.
	Close() error
}

// Options are what every system is opened with.
type Options struct {
	// URL is the Redis: redis://[:password@]host:port/db.
	URL string
	// PeerPoll, if positive, sets the peers' polling intervals (for
	// empty queues and for delayed jobs) where they have a setting for
	// it; zero keeps each library's default. jobgen does not poll.
	PeerPoll time.Duration
	// Pool is the number of Redis connections a system may keep idle,
	// for systems whose pool size must be given.
	Pool int
	// JobgenLimit sets the flow limits of jobgen's queue; zero, none.
	JobgenLimit runtime.QueueLimit
}

// Info names a system and says how it is driven.
type Info struct {
	Name string
	// BulkMode says how EnqueueBatch sends jobs.
	BulkMode string
	// DelayMode says how a delayed job's time is given to the system.
	DelayMode string
	// AtLeastOnce systems may run a job twice; the smoke test allows
	// their duplicates (and reports them).
	AtLeastOnce bool
	Open        func(ctx context.Context, o Options) (System, error)
}

// Systems lists every system the harness knows, jobgen first.
var Systems = []Info{jobgenInfo, asynqInfo, gocraftInfo, taskqInfo}

// SystemNames returns the names of Systems, in order.
func SystemNames() []string {
	names := make([]string, len(Systems))
	for i, s := range Systems {
		names[i] = s.Name
	}
	return names
}

// LookupSystem returns the system called name.
func LookupSystem(name string) (Info, error) {
	for _, s := range Systems {
		if s.Name == name {
			return s, nil
		}
	}
	return Info{}, fmt.Errorf("unknown system %q: want one of %v", name, SystemNames())
}

// errShort is returned by decoders of a binary job shorter than its
// header.
var errShort = errors.New("bench: job payload shorter than its 16-byte header")

// appendBinary encodes j as 8 bytes of Seq, 8 of At, then Pad: the form
// of systems whose payload is raw bytes.
func appendBinary(b []byte, j Job) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(j.Seq))
	b = binary.BigEndian.AppendUint64(b, uint64(j.At))
	return append(b, j.Pad...)
}

// decodeBinaryHeader reads Seq and At from a payload of appendBinary.
func decodeBinaryHeader(b []byte) (seq, at int64, err error) {
	if len(b) < 16 {
		return 0, 0, errShort
	}
	return int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:])), nil
}

// filler returns n letters, different from run to run so that no layer
// can compress them away.
func filler(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, max(n, 0))
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// padFor returns the filler that makes a job of payload bytes: 8 bytes of
// sequence number and 8 of time, and the rest filler.
func padFor(payload int) string { return filler(payload - 16) }

// contains reports whether list holds s.
func contains(list []string, s string) bool { return slices.Contains(list, s) }
