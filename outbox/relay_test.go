package outbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/pgtest"
	"github.com/jobgen/jobgen/internal/redistest"
	"github.com/jobgen/jobgen/outbox"
	"github.com/jobgen/jobgen/runtime"
)

// A job dispatched in a transaction exists if and only if the transaction
// commits, and the relay pushes it once.
func TestDispatchTxCommitsOrRollsBack(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var kept, dropped string
		b.tx(t, false, func(tx *sql.Tx) {
			id, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "rolled@back"})
			require.NoError(t, err)
			dropped = id
		})
		b.tx(t, true, func(tx *sql.Tx) {
			id, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "a@b"})
			require.NoError(t, err)
			kept = id
		})
		require.Equal(t, 1, b.rows(t))
		require.Zero(t, b.sizes(t, "mail").Ready, "nothing reaches Redis before the relay")

		b.relayAll(t)
		require.Equal(t, 0, b.rows(t))
		require.Equal(t, int64(1), b.sizes(t, "mail").Ready)
		res := b.reserve(t, "mail", 10)
		require.Len(t, res.Jobs, 1)
		require.Equal(t, kept, res.Jobs[0].ID)
		require.NotEqual(t, dropped, kept)
		_, got := decodeMail(t, res.Jobs[0])
		require.Equal(t, "a@b", got.To)
		require.Equal(t, int64(1), b.relay.Counts().Relayed)
	})
}

// The crash the design is for: the relay pushed, the job ran and was
// acked, and the relay died before it deleted the row. The next relay
// must not push the job again.
func TestRelayKilledAfterPushDoesNotPushTwice(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		b.tx(t, true, func(tx *sql.Tx) {
			_, err := runtime.DispatchManyTx(b.ctx, tx, []mailJob{{To: "1"}, {To: "2"}, {To: "3"}})
			require.NoError(t, err)
		})
		b.relay.CrashAfterPush(errors.New("killed"))
		_, err := b.relay.RelayOnce(b.ctx)
		require.ErrorContains(t, err, "killed")
		require.Equal(t, 3, b.rows(t), "the rows outlive the relay's transaction")

		// The jobs run and are acked: Redis forgets their IDs.
		res := b.reserve(t, "mail", 10)
		require.Len(t, res.Jobs, 3)
		broker := runtime.NewBroker(b.engine)
		for _, j := range res.Jobs {
			require.NoError(t, broker.Ack(b.ctx, j.Ref))
		}
		require.Equal(t, runtime.Sizes{}, b.sizes(t, "mail"))

		b.relay.CrashAfterPush(nil)
		b.relayAll(t)
		require.Equal(t, 0, b.rows(t))
		require.Equal(t, runtime.Sizes{}, b.sizes(t, "mail"), "a job was pushed twice")
		c := b.relay.Counts()
		require.Equal(t, int64(3), c.Relayed)
		require.Equal(t, int64(3), c.Skipped)

		// Their marks now count down, rather than stay for good.
		marks := b.marks(t, "mail")
		require.Len(t, marks, 3)
		for m, score := range marks {
			require.Less(t, score, 1e15, "mark %s still pending", m)
		}
	})
}

// A relay that died after it deleted the rows, before it released their
// marks, leaves them pending; Reconcile lets them go, and only theirs.
func TestReconcileReleasesTheMarksOfDeletedRows(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		b.tx(t, true, func(tx *sql.Tx) {
			_, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "x"})
			require.NoError(t, err)
		})
		b.relay.CrashAfterCommit(errors.New("killed"))
		_, err := b.relay.RelayOnce(b.ctx)
		require.ErrorContains(t, err, "killed")
		require.Equal(t, 0, b.rows(t))
		marks := b.marks(t, "mail")
		require.Len(t, marks, 1)
		for _, s := range marks {
			require.GreaterOrEqual(t, s, 1e15, "pending")
		}
		// Reconcile leaves marks younger than a minute: their relay may
		// be on its way to releasing them.
		n, err := b.relay.Reconcile(b.ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		b.ageMarks(t, "mail", 2*time.Minute)
		n, err = b.relay.Reconcile(b.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		marks = b.marks(t, "mail")
		for _, s := range marks {
			require.Less(t, s, 1e15, "released")
		}
	})
}

func TestDispatchTxCarriesEveryOption(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{Partitions: map[string]int{"parts": 4}}, func(t *testing.T, b bundle) {
		var delayed, onQueue, chain string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			delayed, err = runtime.NewPendingDispatch(mailJob{To: "later"}).Delay(time.Hour).DispatchTx(b.ctx, tx)
			require.NoError(t, err)
			onQueue, err = runtime.NewPendingDispatch(mailJob{To: "elsewhere"}).OnQueue("other").DispatchTx(b.ctx, tx)
			require.NoError(t, err)
			chain, err = runtime.Chain(mailJob{To: "first"}, mailJob{To: "second"}).DispatchTx(b.ctx, tx)
			require.NoError(t, err)
			for i := range 8 {
				_, err = runtime.NewPendingDispatch(mailJob{To: fmt.Sprint(i)}).OnQueue("parts").DispatchTx(b.ctx, tx)
				require.NoError(t, err)
			}
		})
		b.relayAll(t)

		s := b.sizes(t, "mail")
		require.Equal(t, int64(1), s.Delayed)
		require.Equal(t, int64(1), s.Ready, "the chain's first job")
		job, ok, err := runtime.NewInspector(b.engine).FindJob(b.ctx, "mail", delayed)
		require.NoError(t, err)
		require.True(t, ok)
		require.WithinDuration(t, time.Now().Add(time.Hour), job.Due, 5*time.Second)

		res := b.reserve(t, "other", 1)
		require.Len(t, res.Jobs, 1)
		require.Equal(t, onQueue, res.Jobs[0].ID)

		res = b.reserve(t, "mail", 1)
		require.Len(t, res.Jobs, 1)
		require.Equal(t, chain, res.Jobs[0].ID)
		env, _ := decodeMail(t, res.Jobs[0])
		require.Len(t, env.Chain, 1, "the chain's second job rides along")

		// A partitioned queue's jobs spread over its partitions.
		require.Equal(t, int64(8), b.sizes(t, "parts").Ready)
		used := 0
		for _, p := range runtime.PartitionNames("parts", 4) {
			if b.sizes(t, p).Ready > 0 {
				used++
			}
		}
		require.Greater(t, used, 1)
	})
}

// A unique job's lock is taken as the relay pushes it; a second job with
// the key held is dropped, as Dispatch would refuse it.
func TestRelayTakesUniqueLocks(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var first string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			first, err = runtime.DispatchTx(b.ctx, tx, mailJob{To: "first", Unique: "user-7"})
			require.NoError(t, err)
		})
		// Dispatch, between the commit and the relay, takes the lock: what
		// DispatchTx could not know, the relay meets as it pushes.
		second, err := runtime.Dispatch(b.ctx, mailJob{To: "second", Unique: "user-7"})
		require.NoError(t, err)
		b.relayAll(t)
		require.Equal(t, 0, b.rows(t))
		res := b.reserve(t, "mail", 10)
		require.Len(t, res.Jobs, 1)
		_, got := decodeMail(t, res.Jobs[0])
		require.Equal(t, "second", got.To)
		require.Equal(t, int64(1), b.relay.Counts().Dropped)
		require.NotEqual(t, first, second)

		// Dispatch, now, meets the same lock.
		_, err = runtime.Dispatch(b.ctx, mailJob{To: "third", Unique: "user-7"})
		var dup *runtime.DuplicateError
		require.ErrorAs(t, err, &dup)
		require.Equal(t, res.Jobs[0].ID, dup.HolderID)
	})
}

func TestBatchThroughTheOutbox(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		var id string
		b.tx(t, true, func(tx *sql.Tx) {
			var err error
			id, err = runtime.NewBatch(itemJob{N: 1}, itemJob{N: 2}, runtime.Chain(itemJob{N: 3}, itemJob{N: 4})).
				Name("import").OnQueue("items").DispatchTx(b.ctx, tx)
			require.NoError(t, err)
		})
		_, ok, err := runtime.NewInspector(b.engine).Batches().Find(b.ctx, id)
		require.NoError(t, err)
		require.False(t, ok, "no batch before the relay")

		// Killed once after the push, the relay's second pass finds the
		// batch and the jobs there and adds nothing.
		b.relay.CrashAfterPush(errors.New("killed"))
		_, err = b.relay.RelayOnce(b.ctx)
		require.ErrorContains(t, err, "killed")
		b.relay.CrashAfterPush(nil)
		b.relayAll(t)

		st, ok, err := runtime.NewInspector(b.engine).Batches().Find(b.ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "import", st.Name)
		require.Equal(t, 4, st.Total)
		require.Equal(t, 4, st.Pending)
		require.Equal(t, int64(3), b.sizes(t, "items").Ready)
		require.Equal(t, 0, b.rows(t))
	})
}

// Two relays at once share the rows, and push each job once.
func TestTwoRelaysPushEachJobOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		const n = 600
		want := make([]string, 0, n)
		for range 6 {
			b.tx(t, true, func(tx *sql.Tx) {
				jobs := make([]mailJob, n/6)
				for i := range jobs {
					jobs[i] = mailJob{To: fmt.Sprint(i)}
				}
				ids, err := runtime.DispatchManyTx(b.ctx, tx, jobs)
				require.NoError(t, err)
				want = append(want, ids...)
			})
		}
		second, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: b.db, Batch: 50})
		require.NoError(t, err)
		first, err := outbox.NewRelay(b.engine, outbox.RelayConfig{DB: b.db, Batch: 50})
		require.NoError(t, err)
		// The first relay holds its first claim until the second, started
		// only then, has relayed a claim of its own: SKIP LOCKED hands it
		// other rows.
		holding, secondDone := make(chan struct{}), make(chan struct{})
		var once sync.Once
		second.AfterPush(func() error { once.Do(func() { close(secondDone) }); return nil })
		var held bool
		first.AfterPush(func() error {
			if !held {
				held = true
				close(holding)
				select {
				case <-secondDone:
				case <-time.After(10 * time.Second):
					return errors.New("the second relay relayed nothing while the first held its rows")
				}
			}
			return nil
		})
		drain := func(r *outbox.Relay) {
			for {
				n, err := r.RelayOnce(b.ctx)
				if !assert.NoError(t, err) || n == 0 {
					return
				}
			}
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); drain(first) }()
		<-holding
		go func() { defer wg.Done(); drain(second) }()
		wg.Wait()
		require.Equal(t, 0, b.rows(t))
		require.Equal(t, int64(n), first.Counts().Relayed+second.Counts().Relayed)
		require.Positive(t, first.Counts().Relayed)
		require.Positive(t, second.Counts().Relayed)
		var got []string
		for {
			res := b.reserve(t, "mail", 500)
			if len(res.Jobs) == 0 {
				break
			}
			for _, j := range res.Jobs {
				got = append(got, j.ID)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		require.Equal(t, want, got)
	})
}

// A row the relay cannot push is parked with its reason, and the rows
// behind it go on; rows of a connection the relay does not serve stay.
func TestRelayParksWhatItCannotPush(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		_, err := b.db.ExecContext(b.ctx, "INSERT INTO "+b.table+" (id, kind, queue, name, payload) VALUES "+
			"('bad1', 'job', 'no{braces}', 'x', '\\x00'), ('bad2', 'nonsense', 'mail', 'y', '\\x00'),"+
			"('other1', 'job', 'mail', 'z', '\\x00')")
		require.NoError(t, err)
		_, err = b.db.ExecContext(b.ctx, "UPDATE "+b.table+" SET connection = 'billing' WHERE id = 'other1'")
		require.NoError(t, err)
		b.tx(t, true, func(tx *sql.Tx) {
			_, err := runtime.DispatchTx(b.ctx, tx, mailJob{To: "fine"})
			require.NoError(t, err)
		})
		b.relayAll(t)
		require.Equal(t, int64(1), b.sizes(t, "mail").Ready)
		require.Equal(t, int64(2), b.relay.Counts().Parked)
		rs, err := b.db.QueryContext(b.ctx, "SELECT id, coalesce(error, '') FROM "+b.table+" ORDER BY id")
		require.NoError(t, err)
		defer rs.Close()
		got := map[string]string{}
		for rs.Next() {
			var id, msg string
			require.NoError(t, rs.Scan(&id, &msg))
			got[id] = msg
		}
		require.Len(t, got, 3)
		require.Contains(t, got["bad1"], "no{braces}")
		require.Contains(t, got["bad2"], `unknown outbox row kind "nonsense"`)
		require.Empty(t, got["other1"], "left for a relay of connection billing")
	})
}

// The relay's backlog reaches Inspector.Outbox.
func TestRelayPublishesTheBacklog(t *testing.T) {
	t.Parallel()
	forEachBackend(t, runtime.EngineConfig{}, func(t *testing.T, b bundle) {
		_, ok, err := runtime.NewInspector(b.engine).Outbox(b.ctx)
		require.NoError(t, err)
		require.False(t, ok)
		_, err = b.db.ExecContext(b.ctx, "INSERT INTO "+b.table+" (id, kind, queue, name, payload, created_at) VALUES "+
			"('bad1', 'nonsense', 'mail', 'x', '\\x00', now() - interval '1 hour')")
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(b.ctx)
		done := make(chan error)
		go func() { done <- b.relay.Run(ctx) }()
		require.Eventually(t, func() bool {
			got, ok, err := runtime.NewInspector(b.engine).Outbox(b.ctx)
			return err == nil && ok && got.Parked == 1
		}, 10*time.Second, 50*time.Millisecond)
		cancel()
		require.NoError(t, <-done)
		got, _, err := runtime.NewInspector(b.engine).Outbox(b.ctx)
		require.NoError(t, err)
		require.Equal(t, b.table, got.Table)
		require.Equal(t, int64(1), got.Rows)
		require.InDelta(t, time.Hour.Seconds(), got.Age().Seconds(), 60)
	})
}

// With EngineConfig.Replication, the relay deletes rows only once WAIT
// has the replicas confirm their push: with no replica to confirm it,
// the rows stay; with one, they go.
func TestRelayWaitsForReplicas(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	db, err := sql.Open("postgres", url)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	for _, withReplica := range []bool{false, true} {
		master := redistest.StartServer(t)
		if withReplica {
			replica := redistest.StartReplica(t, master.Addr)
			rc := redis.NewClient(&redis.Options{Addr: replica.Addr})
			require.Eventually(t, func() bool {
				info, err := rc.Info(ctx, "replication").Result()
				return err == nil && strings.Contains(info, "master_link_status:up")
			}, 10*time.Second, 20*time.Millisecond)
			_ = rc.Close()
		}
		table := pgtest.Table(t, db)
		e, err := runtime.Open(ctx, "redis://"+master.Addr, runtime.EngineConfig{Prefix: redistest.Prefix(t), OutboxTable: table,
			Replication: runtime.ReplicationConfig{Replicas: 1, Timeout: 200 * time.Millisecond}})
		require.NoError(t, err)
		require.NoError(t, runtime.MigrateOutbox(ctx, db, table))
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = runtime.DispatchManyTx(runtime.WithDispatcher(ctx, e), tx, []mailJob{{To: "1"}, {To: "2"}})
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		r, err := outbox.NewRelay(e, outbox.RelayConfig{DB: db})
		require.NoError(t, err)
		_, err = r.RelayOnce(ctx)
		var n int
		require.NoError(t, db.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
		if withReplica {
			require.NoError(t, err)
			require.Zero(t, n, "confirmed: the rows go")
		} else {
			require.ErrorIs(t, err, runtime.ErrNotReplicated)
			require.Equal(t, 2, n, "unconfirmed: the rows stay, for a later pass")
		}
		_ = e.Close()
	}
}
