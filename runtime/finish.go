package runtime

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	jobrdb "github.com/jobgen/jobgen/internal/rdb"
)

// Finish is a finished job to ack that leaves something behind: its
// result, its record on a queue that keeps finished jobs
// (EngineConfig.KeepFinished), or both. Broker.Finish takes them.
type Finish struct {
	Ref
	// Result is the job's encoded result (RecordResult); nil or empty
	// for none.
	Result []byte
	// Record describes the job for the queue's record of finished jobs;
	// nil for none, and ignored on a queue that keeps none. Its ID, Queue
	// and FinishedAt are filled in from Ref and Redis's clock.
	Record *FinishedJob

	// step is the end of a workflow step to record in the ack
	// (workflow_ack.go), set while the worker's steps run.
	step *jobrdb.StepEnd
}

// FinishedJob is one entry of a queue's record of finished jobs
// (Inspector.FinishedJobs).
type FinishedJob struct {
	ID       string
	Queue    string
	Name     string // the job's wire name
	Attempts int    // the attempt that succeeded (1 for the first)
	Worker   string // the worker's Name
	// StartedAt is when the attempt that succeeded started, by the
	// worker's clock; Runtime is how long its handler ran.
	StartedAt time.Time
	Runtime   time.Duration
	// ResultSize is the size of the encoded result, 0 for none.
	ResultSize int
	Tags       []string
	// FinishedAt is when the ack landed, by Redis's clock.
	FinishedAt time.Time
	// Wait is how long the attempt that succeeded waited, ready, before
	// its handler started (readyAt); negative when not known. It is counted in the
	// queue's wait histogram (Inspector.JobHistory), not kept in the
	// record.
	Wait time.Duration
	// AttemptErrors are the errors of the job's last earlier attempts
	// (at most 3, oldest first), kept in its record when it succeeded
	// after them; nil when its attempts before left no error.
	AttemptErrors []AttemptError
}

// finishedInfo is how a FinishedJob is stored (finished info hash).
type finishedInfo struct {
	Name       string   `msgpack:"n"`
	Attempts   int      `msgpack:"a"`
	Worker     string   `msgpack:"w,omitempty"`
	StartedAt  int64    `msgpack:"s"`  // unix ms
	Runtime    int64    `msgpack:"r"`  // µs
	ResultSize int      `msgpack:"rs"` // bytes
	Tags       []string `msgpack:"tg,omitempty"`
}

// Finish acks finished jobs and stores what they leave behind in the
// same script call each: a result is never visible for a job whose ack
// was refused. A ref whose lease was lost is left alone, writes
// nothing, and is reported as in Ack.
func (br *Broker) Finish(ctx context.Context, jobs ...Finish) error {
	lost, err := br.e.finish(ctx, jobs)
	if err != nil {
		return err
	}
	return lostError(lost)
}

// finishPer is the most jobs of one finish call; each with a result
// takes two keys.
const finishPer = 500

// runtimesSlot is the span of one runtimes hash.
const runtimesSlot = 10 * time.Minute

// runtimesTTL is how long a runtimes hash lives: a day, and the slot.
const runtimesTTL = 24*time.Hour + runtimesSlot

// finishJobs groups jobs for their finish calls, by queue, finishPer at
// a time, with the refs of each.
func (e *Engine) finishJobs(jobs []Finish) ([]jobrdb.FinishJobs, [][]Ref, error) {
	var out []jobrdb.FinishJobs
	var groups [][]Ref
	byQueue := map[string][]Finish{}
	var order []string
	for _, f := range jobs {
		if _, ok := byQueue[f.Queue]; !ok {
			order = append(order, f.Queue)
		}
		byQueue[f.Queue] = append(byQueue[f.Queue], f)
	}
	slot := time.Now().UnixMilli() / runtimesSlot.Milliseconds()
	for _, q := range order {
		keep, keeps := e.keepFinished(q)
		args := jobrdb.Finish{Retention: e.cfg.ResultRetention.Milliseconds(), DoneTTL: doneTTL.Milliseconds(),
			KeepMax: int64(keep.MaxJobs), KeepAge: keep.MaxAge.Milliseconds(), Slot: slot, RuntimesTTL: runtimesTTL.Milliseconds()}
		grouped := e.grouped.has(q)
		fs := byQueue[q]
		for len(fs) > 0 {
			n := min(finishPer, len(fs))
			fj := jobrdb.NewFinishJobs(q, n, grouped, args)
			refs := make([]Ref, n)
			for i, f := range fs[:n] {
				info, field := "", ""
				if keeps && f.Record != nil {
					b, err := msgpack.Marshal(finishedInfo{Name: f.Record.Name, Attempts: f.Record.Attempts, Worker: f.Record.Worker,
						StartedAt: f.Record.StartedAt.UnixMilli(), Runtime: f.Record.Runtime.Microseconds(), ResultSize: len(f.Result), Tags: f.Record.Tags})
					if err != nil {
						return nil, nil, fmt.Errorf("finish job %s: %w", f.ID, err)
					}
					info, field = string(b), runtimeField(f.Record.Name, f.Record.Runtime)
					if f.Record.Wait >= 0 {
						field += "\x1e" + waitField(f.Record.Name, f.Record.Wait)
					}
				}
				fj.Add(f.ID, f.Token, f.Result, info, field)
				refs[i] = f.Ref
			}
			out = append(out, fj)
			groups = append(groups, refs)
			fs = fs[n:]
		}
	}
	return out, groups, nil
}

// finish is Finish, returning the refs whose ack was refused.
func (e *Engine) finish(ctx context.Context, jobs []Finish) (lost []Ref, err error) {
	fjobs, groups, err := e.finishJobs(jobs)
	if err != nil {
		return nil, err
	}
	miss, err := e.store.Ack(ctx, nil, fjobs, e.settleBells(groups))
	if err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	}
	return missed(groups, miss), nil
}

// The runtime histogram: bucket b holds runtimes r (in µs) with
// floor(4·log2(r+1)) = b, so each bucket is 19% wider than the one
// before, and a percentile read from it is within about 10% of the true
// one.
const bucketsPerOctave = 4

// runtimeBucket is the histogram bucket of d.
func runtimeBucket(d time.Duration) int {
	us := max(d.Microseconds(), 0)
	return int(math.Floor(bucketsPerOctave * math.Log2(float64(us)+1)))
}

// bucketMid is the runtime a percentile falling in bucket b reads as:
// the geometric middle of its bounds.
func bucketMid(b int) time.Duration {
	lo := math.Exp2(float64(b)/bucketsPerOctave) - 1
	hi := math.Exp2(float64(b+1)/bucketsPerOctave) - 1
	return time.Duration(math.Sqrt(math.Max(lo, 1)*hi) * float64(time.Microsecond))
}

// runtimeField is the runtimes hash field that counts a job of name
// that ran for d.
func runtimeField(name string, d time.Duration) string {
	return name + "|" + strconv.Itoa(runtimeBucket(d))
}

// waitField is the runtimes hash field that counts a job of name that
// waited d, ready, before it started: the same buckets as runtimes,
// "name|w<bucket>".
func waitField(name string, d time.Duration) string {
	return name + "|w" + strconv.Itoa(runtimeBucket(d))
}
