package console_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// closedRedis returns the URL of a port nothing listens on: a Redis
// that is down.
func closedRedis(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "redis://" + addr + "/0"
}

// A relay is stopped while rows wait: queue:monitor, given the outbox
// database, reads the backlog and the relays' passes from PostgreSQL,
// so --max-outbox-age and --max-relay-idle fail within their bounds
// though the relay's last report to Redis said no row was waiting, and
// so they do with Redis down.
func TestMonitorSeesAStoppedRelay(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	db := withOutbox(t, b)
	b.ok(t, "outbox:migrate")
	cfg := b.engine.Config()
	cfg.OutboxTable = b.outboxTable
	e, err := runtime.NewEngine(b.ctx, b.engine.Client(), cfg)
	require.NoError(t, err)
	r, err := outbox.NewRelay(e, outbox.RelayConfig{DB: db, Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(b.ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(ctx) }()
	dispatchTx(t, b, db, greet{"before"})
	require.Eventually(t, func() bool {
		h, err := outbox.ReadHealth(b.ctx, db, b.outboxTable)
		require.NoError(t, err)
		pub, ok, err := runtime.NewInspector(e).Outbox(b.ctx)
		require.NoError(t, err)
		return h.Passed && h.Live == 1 && h.Rows == 0 && ok && pub.Rows == 0 && b.sizes(t, "default").Ready == 1
	}, 10*time.Second, 10*time.Millisecond, "the relay relays, records its pass and publishes an empty backlog")
	out := b.ok(t, "queue:monitor", "--max-outbox-age", "1s", "--max-relay-idle", "1m")
	require.Regexp(t, `Outbox `+b.outboxTable+`: 0 rows waiting; last relay pass \d+s ago, 1 relay live \(read from PostgreSQL\)\.`, out)

	cancel()
	require.NoError(t, <-stopped)
	dispatchTx(t, b, db, greet{"a"}, greet{"b"}, greet{"c"})

	var stderr string
	require.Eventually(t, func() bool {
		var code int
		code, _, stderr = b.run(t, "queue:monitor", "--max-outbox-age", "1s")
		return code == 1
	}, 20*time.Second, 50*time.Millisecond, "--max-outbox-age fails once the oldest row has waited 1s")
	require.Regexp(t, `outbox `+b.outboxTable+` \(oldest row waited [0-9.]+m?s, more than 1s\)`, stderr)
	require.Eventually(t, func() bool {
		var code int
		code, _, stderr = b.run(t, "queue:monitor", "--max-relay-idle", "2s")
		return code == 1
	}, 20*time.Second, 50*time.Millisecond, "--max-relay-idle fails once no relay has passed for 2s")
	require.Regexp(t, `outbox `+b.outboxTable+` \(3 rows waiting, and no relay has completed a pass for \d+s, more than 2s: is a relay running, and can it reach Redis\?\)`, stderr)
	pub, _, err := runtime.NewInspector(e).Outbox(b.ctx)
	require.NoError(t, err)
	require.Zero(t, pub.Rows, "what the relay last published")

	// Redis down: the backlog is still read, and the monitor fails.
	code, stdout, stderr := b.runRaw(t, "queue:monitor", "--max-outbox-age", "1s", "--redis", closedRedis(t), "--prefix", b.prefix)
	require.Equal(t, 1, code, stdout)
	require.Contains(t, stdout, "Redis: not reached: ")
	require.Regexp(t, `Outbox `+b.outboxTable+`: 3 rows waiting, oldest [0-9.]+m?s; last relay pass \d+s ago, 1 relay live \(read from PostgreSQL\)\.`, stdout)
	require.Contains(t, stderr, "app queue:monitor: Redis not reached: ")
	require.Regexp(t, `over threshold: outbox `+b.outboxTable+` \(oldest row waited`, stderr)
}

// A missing outbox table fails queue:monitor, with or without
// --max-outbox-age, naming the table and the fix.
func TestMonitorOutboxTableMissing(t *testing.T) {
	t.Parallel()
	b := setup(t, redistest.Backends(t)[0])
	withOutbox(t, b)
	for _, args := range [][]string{{"queue:monitor"}, {"queue:monitor", "--max-outbox-age", "5s"}} {
		code, stdout, stderr := b.run(t, args...)
		require.Equal(t, 1, code, "%v: %s", args, stdout)
		require.Contains(t, stdout, "Outbox "+b.outboxTable+": the table does not exist.")
		require.Contains(t, stderr, fmt.Sprintf(`outbox table %s does not exist, so DispatchTx fails: run outbox:migrate, or add runtime.OutboxDDL(%q) to the application's migrations`, b.outboxTable, b.outboxTable))
	}
}
