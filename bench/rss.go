package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The rss phase enqueues RSSN jobs, then drains them in a subprocess
// that runs only the system's workers, and samples that process's
// resident set size while it works.

// childEnv holds the JSON childConfig of a worker subprocess.
const childEnv = "JOBBENCH_WORKER_CHILD"

// rssSampleEvery is how often the child's RSS is read.
const rssSampleEvery = 100 * time.Millisecond

type childConfig struct {
	System      string        `json:"system"`
	URL         string        `json:"url"`
	N           int           `json:"n"`
	Concurrency int           `json:"concurrency"`
	PeerPoll    time.Duration `json:"peer_poll"`
	Pool        int           `json:"pool"`
	Timeout     time.Duration `json:"timeout"`
}

// RSS is a worker process's resident memory while it drained the rss
// phase's jobs, in MB (2^20 bytes).
type RSS struct {
	// FirstMB is the first sample, taken as the workers start.
	FirstMB float64 `json:"first_mb"`
	// StartMB is the first sample taken after 5% of the jobs ran, once
	// the process has warmed up; EndMB the one taken once all had run.
	StartMB float64 `json:"start_mb"`
	EndMB   float64 `json:"end_mb"`
	MaxMB   float64 `json:"max_mb"`
	Samples int     `json:"samples"`
	// Flat is EndMB within 10% (or 4 MB) of StartMB.
	Flat bool `json:"flat"`
}

// MaybeRunChild runs this process as the rss phase's worker subprocess,
// and exits, if it was started as one; otherwise it returns at once. Call
// it first thing in main (and in TestMain of tests that run the phase).
func MaybeRunChild() {
	v := os.Getenv(childEnv)
	if v == "" {
		return
	}
	if err := runChild(v); err != nil {
		fmt.Fprintln(os.Stderr, "jobbench worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runChild drains the jobs with the system's workers and writes, to file
// descriptor 3, a "sample JOBS_RUN RSS_MB" line as the workers start,
// every rssSampleEvery while they run and once all jobs have run, then
// "done SECONDS DUPLICATES MISSING".
func runChild(v string) error {
	var cc childConfig
	if err := json.Unmarshal([]byte(v), &cc); err != nil {
		return fmt.Errorf("bad %s: %w", childEnv, err)
	}
	out := os.NewFile(3, "progress")
	if out == nil {
		return errors.New("no progress pipe on fd 3")
	}
	info, err := LookupSystem(cc.System)
	if err != nil {
		return err
	}
	ctx := context.Background()
	sys, err := info.Open(ctx, Options{URL: cc.URL, PeerPoll: cc.PeerPoll, Pool: cc.Pool})
	if err != nil {
		return err
	}
	defer sys.Close()
	tr := newTracker(cc.N)
	tr.touch()
	start := time.Now()
	if err := sys.Start(cc.Concurrency, tr.handle); err != nil {
		return err
	}
	pid := os.Getpid()
	sample := func() {
		if mb, err := readRSS(pid); err == nil {
			fmt.Fprintf(out, "sample %d %f\n", tr.distinct.Load(), mb)
		}
	}
	sample()
	deadline := time.After(cc.Timeout)
	tick := time.NewTicker(rssSampleEvery)
	defer tick.Stop()
	end := time.Time{}
loop:
	for {
		select {
		case <-tr.done:
			end = tr.lastRun()
			break loop
		case <-deadline:
			end = time.Now()
			break loop
		case <-tick.C:
			sample()
		}
	}
	sample()
	if err := sys.Stop(); err != nil {
		return err
	}
	dups, missing := tr.counts()
	_, err = fmt.Fprintf(out, "done %f %d %d\n", end.Sub(start).Seconds(), dups, missing)
	return err
}

// rss enqueues RSSN jobs in batches, then drains them in a worker
// subprocess while sampling its RSS.
func (r *runner) rss(ctx context.Context, info Info) []Record {
	n := r.cfg.RSSN
	rec := Record{System: info.Name, Phase: PhaseRSS, Jobs: n, Mode: "drain in a worker subprocess; jobs sent by " + info.BulkMode}
	sys, err := r.open(ctx, info)
	if err != nil {
		return failed(info, err, PhaseRSS)
	}
	b := r.cfg.Batch
	sendErr := r.produce(ctx, (n+b-1)/b, 0, func(i int64) error {
		first := int(i) * b
		jobs := make([]Job, 0, min(b, n-first))
		now := time.Now()
		for seq := first; seq < min(first+b, n); seq++ {
			jobs = append(jobs, r.job(int64(seq), now))
		}
		return sys.EnqueueBatch(ctx, jobs)
	})
	sys.Close()
	if sendErr != nil {
		return failed(info, sendErr, PhaseRSS)
	}

	exe, err := os.Executable()
	if err != nil {
		return failed(info, err, PhaseRSS)
	}
	cc, _ := json.Marshal(childConfig{System: info.Name, URL: r.cfg.RedisURL, N: n, Concurrency: r.cfg.Concurrency,
		PeerPoll: r.cfg.PeerPoll, Pool: r.options().Pool, Timeout: r.rssTimeout()})
	pr, pw, err := os.Pipe()
	if err != nil {
		return failed(info, err, PhaseRSS)
	}
	defer pr.Close()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(cc))
	cmd.ExtraFiles = []*os.File{pw}
	cmd.Stdout = io.Discard // some peers print their errors on stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		pw.Close()
		return failed(info, err, PhaseRSS)
	}
	pw.Close()

	var st RSS
	started := false
	var done string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		var jobs int64
		var mb float64
		if _, err := fmt.Sscanf(line, "sample %d %f", &jobs, &mb); err != nil {
			done = line
			continue
		}
		st.Samples++
		if st.Samples == 1 {
			st.FirstMB = mb
		}
		if !started && jobs >= int64(n)/20 {
			started, st.StartMB = true, mb
		}
		st.EndMB, st.MaxMB = mb, max(st.MaxMB, mb)
	}
	waitErr := cmd.Wait()
	var secs float64
	if _, err := fmt.Sscanf(done, "done %f %d %d", &secs, &rec.Duplicates, &rec.Missing); err != nil {
		rec.Error = fmt.Sprintf("worker subprocess: %v; %s", waitErr, strings.TrimSpace(stderr.String()))
		return []Record{rec}
	}
	if !started {
		st.StartMB = st.FirstMB
	}
	st.Flat = st.EndMB <= st.StartMB*1.10 || st.EndMB-st.StartMB <= 4
	rec.RSS = &st
	rec.Seconds = secs
	rec.JobsPerSec = float64(n) / secs
	rec.Complete = waitErr == nil && rec.Duplicates == 0 && rec.Missing == 0
	if waitErr != nil {
		rec.Error = waitErr.Error()
	}
	return []Record{rec}
}

// rssTimeout is Timeout scaled from N jobs to RSSN jobs.
func (r *runner) rssTimeout() time.Duration {
	return r.cfg.Timeout * time.Duration(max(1, (r.cfg.RSSN+r.cfg.N-1)/r.cfg.N))
}

// readRSS returns a process's resident set size in MB, from
// /proc/PID/status (Linux).
func readRSS(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status")
}
