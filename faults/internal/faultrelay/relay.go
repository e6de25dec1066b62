// Package faultrelay is the outbox relay process of the fault suite: the
// test binary re-executes itself in this mode, so that a test can kill a
// real relay with SIGKILL at any point of its work.
//
// After each claim the relay appends a line to its ledger (one write(2),
// O_APPEND): rows claimed, jobs pushed, rows found pushed before. A test
// sums the ledgers of all its relays.
package faultrelay

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/lib/pq" // database/sql's PostgreSQL driver

	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// ConfigEnv holds the JSON-encoded Config of a child relay.
const ConfigEnv = "JOBGEN_FAULTS_RELAY"

// Config is a child relay's configuration.
type Config struct {
	RedisURL, Prefix string
	DBURL, Table     string
	Batch            int
	Ledger           string
}

// Child reports whether this process is a child relay.
func Child() bool { return os.Getenv(ConfigEnv) != "" }

// Main runs the child relay until it is signalled or killed, and returns
// the exit status.
func Main() int {
	var cfg Config
	if err := json.Unmarshal([]byte(os.Getenv(ConfigEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "faultrelay: bad config:", err)
		return 2
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "faultrelay:", err)
		return 1
	}
	return 0
}

func run(cfg Config) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ledger, err := os.OpenFile(cfg.Ledger, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	e, err := runtime.Open(ctx, cfg.RedisURL, runtime.EngineConfig{Prefix: cfg.Prefix, OutboxTable: cfg.Table, AllowEviction: true})
	if err != nil {
		return err
	}
	db, err := sql.Open("postgres", cfg.DBURL)
	if err != nil {
		return err
	}
	r, err := outbox.NewRelay(e, outbox.RelayConfig{DB: db, Batch: cfg.Batch, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stdout, "ready")
	// Reconcile first, as Run does, then claim in a loop.
	_, _ = r.Reconcile(ctx)
	for ctx.Err() == nil {
		before := r.Counts()
		n, err := r.RelayOnce(ctx)
		after := r.Counts()
		line := strings.Join([]string{strconv.Itoa(n), strconv.FormatInt(after.Relayed-before.Relayed, 10),
			strconv.FormatInt(after.Skipped-before.Skipped, 10)}, " ") + "\n"
		if _, werr := ledger.WriteString(line); werr != nil {
			return werr
		}
		if err != nil || n == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// Totals sums the ledgers: rows claimed, jobs pushed, rows found pushed
// before by a relay that died.
func Totals(paths []string) (claimed, pushed, skipped int64, err error) {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, 0, 0, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 {
				continue // a line cut by the kill
			}
			c, _ := strconv.ParseInt(f[0], 10, 64)
			p, _ := strconv.ParseInt(f[1], 10, 64)
			s, _ := strconv.ParseInt(f[2], 10, 64)
			claimed, pushed, skipped = claimed+c, pushed+p, skipped+s
		}
	}
	return claimed, pushed, skipped, nil
}
