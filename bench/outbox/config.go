package outboxbench

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// The phases, in the order a run takes them.
const (
	PhaseInsert  = "insert"
	PhaseLatency = "latency"
	PhaseDrain   = "drain"
)

// AllPhases are every phase, in order.
var AllPhases = []string{PhaseInsert, PhaseLatency, PhaseDrain}

// The systems.
const (
	SystemJobgen = "jobgen"
	SystemRiver  = "river" // once per Config.RiverCooldowns
)

// AllSystems are every system.
var AllSystems = []string{SystemJobgen, SystemRiver}

// Config configures a run. A zero field takes the default its comment
// names.
type Config struct {
	// PostgresURL names the PostgreSQL both systems use. Required.
	PostgresURL string
	// RedisURL names jobgen's Redis, in the forms runtime.Open takes
	// (redis://host:port/db). Required.
	RedisURL string
	// Systems are the systems to run, from AllSystems. Default all.
	Systems []string
	// Phases are the phases to run. Default AllPhases.
	Phases []string
	// Rounds is how many times each phase runs, the systems' order
	// reversed each round. An insert or drain figure is its system's
	// best round; the latency phase splits LatencyFor between the rounds
	// and pools their jobs. Default 2.
	Rounds int
	// Producers is how many goroutines insert at once. Default 8.
	Producers int
	// InsertFor is how long each insert measurement runs. Default 3s.
	InsertFor time.Duration
	// Many is the number of jobs per transaction in the many-jobs insert
	// and in the drain phase's backlog. Default 100.
	Many int
	// Rates are the latency phase's jobs per second, one per transaction:
	// the phase runs once per rate. Default 100 and 500.
	Rates []int
	// LatencyFor is how long the latency phase inserts for each system,
	// over all rounds. Default 10s.
	LatencyFor time.Duration
	// Warmup is how long consumers run idle before each round of the
	// latency phase inserts its first job. Default 1s.
	Warmup time.Duration
	// Backlog is how many jobs the drain phase inserts before it starts
	// the consumers. Default 50,000.
	Backlog int
	// Concurrency is jobgen's WorkerConfig.Concurrency and River's
	// QueueConfig.MaxWorkers. Default 100.
	Concurrency int
	// Pad is the filler each job carries, in bytes. Default 64.
	Pad int
	// PoolSize is the PostgreSQL connections each system gets. Default 20:
	// River's one pgxpool; jobgen's producers' pool and its relay's
	// (relayPoolSize) together.
	PoolSize int
	// RiverCooldowns are the Config.FetchCooldown values River runs with,
	// one River column each. Default 100ms (River's default) and 1ms (its
	// least).
	RiverCooldowns []time.Duration
	// RiverPoll is River's FetchPollInterval beside a FetchCooldown other
	// than the default: River tuned. Default 50ms. River at its default
	// cooldown keeps its default poll (1s).
	RiverPoll time.Duration
	// RelayCooldown is jobgen's RelayConfig.Cooldown. Default 0, the
	// relay's default (5ms).
	RelayCooldown time.Duration
	// ProbeFreshTable, if set, drains jobgen's backlog twice more, each
	// time on a new outbox table that PostgreSQL has no statistics of
	// yet, as after MigrateOutbox: as created by internal/outboxsql/outbox.sql, then
	// with an index that matches the relay's claim, (connection, seq)
	// WHERE error IS NULL, which internal/outboxsql/outbox.sql does not create.
	ProbeFreshTable bool
	// RelayBatch is jobgen's RelayConfig.Batch, the most rows a claim
	// takes. Default 0, the relay's default (500).
	RelayBatch int
	// Timeout bounds each wait for handlers. Default 2m.
	Timeout time.Duration
	// Log receives a line per measurement as it is taken. Default none.
	Log io.Writer
}

func (c *Config) setDefaults() {
	if len(c.Systems) == 0 {
		c.Systems = AllSystems
	}
	if len(c.Phases) == 0 {
		c.Phases = AllPhases
	}
	c.Rounds = cmp.Or(c.Rounds, 2)
	c.Producers = cmp.Or(c.Producers, 8)
	c.InsertFor = cmp.Or(c.InsertFor, 3*time.Second)
	c.Many = cmp.Or(c.Many, 100)
	if len(c.Rates) == 0 {
		c.Rates = []int{100, 500}
	}
	c.RiverPoll = cmp.Or(c.RiverPoll, 50*time.Millisecond)
	c.LatencyFor = cmp.Or(c.LatencyFor, 10*time.Second)
	c.Warmup = cmp.Or(c.Warmup, time.Second)
	c.Backlog = cmp.Or(c.Backlog, 50_000)
	c.Concurrency = cmp.Or(c.Concurrency, 100)
	c.Pad = cmp.Or(c.Pad, 64)
	c.PoolSize = cmp.Or(c.PoolSize, 20)
	if len(c.RiverCooldowns) == 0 {
		c.RiverCooldowns = []time.Duration{100 * time.Millisecond, time.Millisecond}
	}
	c.Timeout = cmp.Or(c.Timeout, 2*time.Minute)
	if c.Log == nil {
		c.Log = io.Discard
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.PostgresURL == "" {
		errs = append(errs, errors.New("Config.PostgresURL is required"))
	}
	if c.RedisURL == "" {
		errs = append(errs, errors.New("Config.RedisURL is required"))
	}
	for _, s := range c.Systems {
		if !slices.Contains(AllSystems, s) {
			errs = append(errs, fmt.Errorf("Config.Systems: unknown system %q (want %v)", s, AllSystems))
		}
	}
	for _, p := range c.Phases {
		if !slices.Contains(AllPhases, p) {
			errs = append(errs, fmt.Errorf("Config.Phases: unknown phase %q (want %v)", p, AllPhases))
		}
	}
	for _, d := range c.RiverCooldowns {
		if d < time.Millisecond {
			errs = append(errs, fmt.Errorf("Config.RiverCooldowns: %v is under River's least FetchCooldown, 1ms", d))
		}
	}
	for _, r := range c.Rates {
		if r < 1 {
			errs = append(errs, fmt.Errorf("Config.Rates: %d must be positive", r))
		}
	}
	if c.PoolSize <= relayPoolSize {
		errs = append(errs, fmt.Errorf("Config.PoolSize (%d) must be more than jobgen's relay pool (%d), which it includes", c.PoolSize, relayPoolSize))
	}
	if c.Rounds < 1 || c.Producers < 1 || c.Many < 1 || c.Backlog < 1 || c.Concurrency < 1 || c.PoolSize < 2 {
		errs = append(errs, fmt.Errorf("Config: Rounds (%d), Producers (%d), Many (%d), Backlog (%d) and Concurrency (%d) must be positive, PoolSize (%d) at least 2",
			c.Rounds, c.Producers, c.Many, c.Backlog, c.Concurrency, c.PoolSize))
	}
	return errors.Join(errs...)
}

func (c *Config) runs(phase string) bool { return slices.Contains(c.Phases, phase) }

func (c *Config) has(system string) bool { return slices.Contains(c.Systems, system) }
