package bench

import (
	"fmt"
	"io"
	"time"

	"github.com/jobgen/jobgen/runtime"
)

// Phase names, in the order a run takes them.
const (
	PhaseEnqueue = "enqueue"
	PhaseDrain   = "drain"
	PhaseMixed   = "mixed"
	PhaseLatency = "latency"
	PhaseBulk    = "bulk"
	PhaseDelayed = "delayed"
	PhaseRSS     = "rss"
)

// DefaultPhases are the phases of a normal run; PhaseRSS is a long mode
// of its own.
var DefaultPhases = []string{PhaseEnqueue, PhaseDrain, PhaseMixed, PhaseLatency, PhaseBulk, PhaseDelayed}

// AllPhases lists every phase.
var AllPhases = append(append([]string(nil), DefaultPhases...), PhaseRSS)

// Config is one run of the harness.
type Config struct {
	// RedisURL is the database every system runs against; not db 0.
	RedisURL string
	// Systems to measure, by name; default all.
	Systems []string
	// Phases to run; default DefaultPhases.
	Phases []string
	// N is the number of jobs of the enqueue, drain, mixed and bulk
	// phases. Default 100,000.
	N int
	// Producers is the number of goroutines that enqueue. Default 8.
	Producers int
	// Concurrency is the number of handlers each system runs at once.
	// Default 50.
	Concurrency int
	// Payload is the size of a job's data in bytes (sequence number,
	// time and filler). Default 128; at least 16.
	Payload int
	// Batch is the number of jobs per batch call of the bulk phase.
	// Default 1,000.
	Batch int
	// Rate and Duration set the latency phase: Rate jobs a second for
	// Duration. Default 2,000 a second for 10s.
	Rate     int
	Duration time.Duration
	// DelayedN jobs are dispatched in the delayed phase, DelayedRate a
	// second, each delayed by a time spread evenly over DelayMin to
	// DelayMax. Default 2,000 jobs, 500 a second, 50ms to 200ms.
	DelayedN    int
	DelayedRate int
	DelayMin    time.Duration
	DelayMax    time.Duration
	// RSSN is the number of jobs drained by the rss phase, in a worker
	// subprocess whose RSS is sampled. Default 1,000,000.
	RSSN int
	// Timeout bounds the wait for a phase's jobs to run; jobs not run by
	// then are missing. Default 2m. The rss phase waits Timeout times
	// RSSN/N.
	Timeout time.Duration
	// PeerPoll, if positive, sets the peers' polling intervals; zero
	// keeps their defaults. See Options.PeerPoll.
	PeerPoll time.Duration
	// JobgenLimit, if set, is the flow limits of jobgen's queue
	// (EngineConfig.QueueLimits), to measure what a limit too high to
	// bind costs. See Options.JobgenLimit.
	JobgenLimit runtime.QueueLimit
	// CPUProfile, if set, is where a CPU profile of the timed part of
	// the phase named by ProfileAt ("system/phase", default
	// "jobgen/drain") is written.
	CPUProfile string
	ProfileAt  string
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

func (c *Config) setDefaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if len(c.Systems) == 0 {
		c.Systems = SystemNames()
	}
	if len(c.Phases) == 0 {
		c.Phases = DefaultPhases
	}
	def(&c.N, 100_000)
	def(&c.Producers, 8)
	def(&c.Concurrency, 50)
	def(&c.Payload, 128)
	def(&c.Batch, 1000)
	def(&c.Rate, 2000)
	def(&c.DelayedN, 2000)
	def(&c.DelayedRate, 500)
	def(&c.RSSN, 1_000_000)
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.DelayMin == 0 && c.DelayMax == 0 {
		c.DelayMin, c.DelayMax = 50*time.Millisecond, 200*time.Millisecond
	}
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Minute
	}
	if c.ProfileAt == "" {
		c.ProfileAt = "jobgen/" + PhaseDrain
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

func (c *Config) validate() error {
	for _, s := range c.Systems {
		if _, err := LookupSystem(s); err != nil {
			return err
		}
	}
	for _, p := range c.Phases {
		if !contains(AllPhases, p) {
			return fmt.Errorf("unknown phase %q: want some of %v", p, AllPhases)
		}
	}
	switch {
	case c.N < 1 || c.Producers < 1 || c.Concurrency < 1 || c.Batch < 1 || c.Rate < 1 || c.DelayedN < 1 || c.DelayedRate < 1 || c.RSSN < 1:
		return fmt.Errorf("bench: counts and rates must be positive")
	case c.Payload < 16:
		return fmt.Errorf("bench: payload (%d) must be at least 16 bytes: a job carries an 8-byte sequence number and an 8-byte time", c.Payload)
	case c.DelayMin <= 0 || c.DelayMax < c.DelayMin:
		return fmt.Errorf("bench: delays (%v to %v) need 0 < min <= max", c.DelayMin, c.DelayMax)
	case c.Duration <= 0 || c.Timeout <= 0:
		return fmt.Errorf("bench: duration and timeout must be positive")
	}
	return nil
}

// Params are the parameters a record was measured with.
type Params struct {
	Producers   int `json:"producers"`
	Concurrency int `json:"concurrency"`
	Payload     int `json:"payload_bytes"`
	Batch       int `json:"batch,omitempty"`
	Rate        int `json:"rate_per_sec,omitempty"`
}

// Record is the result of one phase of one system: a JSON line.
type Record struct {
	System string `json:"system"`
	Phase  string `json:"phase"`
	// Jobs is the number of jobs the phase sent.
	Jobs    int     `json:"jobs"`
	Seconds float64 `json:"seconds"`
	// JobsPerSec is Jobs over Seconds, for throughput phases.
	JobsPerSec float64 `json:"jobs_per_sec,omitempty"`
	// Latency is from the job's time to its handler's start: dispatch
	// time for the latency and mixed phases, due time for the delayed
	// phase (lateness; negative means early).
	Latency *Latency `json:"latency,omitempty"`
	// RedisBytesPerJob is the growth of Redis's used_memory over the
	// enqueue phase, per job.
	RedisBytesPerJob float64 `json:"redis_bytes_per_job,omitempty"`
	// RedisCPUPerJob is the CPU time Redis used over the phase, per job,
	// in µs; ClientCPUPerJob is the same for the harness's process, which
	// runs the producers and the workers. Throughput phases only.
	RedisCPUPerJob  float64 `json:"redis_cpu_us_per_job,omitempty"`
	ClientCPUPerJob float64 `json:"client_cpu_us_per_job,omitempty"`
	// RSS is the worker's resident memory over the rss phase.
	RSS        *RSS   `json:"rss,omitempty"`
	Duplicates int    `json:"duplicates"`
	Missing    int    `json:"missing"`
	Complete   bool   `json:"complete"`
	Mode       string `json:"mode,omitempty"`
	Error      string `json:"error,omitempty"`
	Params     Params `json:"params"`
}
