package console_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

func TestQueueLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		limits := func() runtime.QueueLimits {
			l, err := runtime.NewInspector(b.engine).QueueLimits(b.ctx, "mail")
			require.NoError(t, err)
			return l
		}
		require.Equal(t, "Queue mail: at most 5 jobs at once.\n", b.ok(t, "queue:limit", "mail", "5", "--force"))
		require.Equal(t, runtime.QueueLimit{Concurrency: 5}, limits().QueueLimit)
		require.Equal(t, "Queue mail: at most 100 jobs started per 1s.\n", b.ok(t, "queue:limit", "mail", "--rate", "100/1s"))
		require.Equal(t, runtime.QueueLimit{Concurrency: 5, Rate: 100, Per: time.Second}, limits().QueueLimit)

		b.push(t, "mail", greet{"a"})
		_, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		require.Equal(t, "Queue mail\n  running:  1\n  limit:    5\n  rate:     100/1s\n  held back by the limit 0 times, by the rate 0 times\n",
			b.ok(t, "queue:limit", "mail"))

		_, err = runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		b.push(t, "other", greet{"b"})
		require.NoError(t, runtime.NewInspector(b.engine).SetQueueLimit(b.ctx, "mail", 1))
		b.push(t, "mail", greet{"c"})
		_, err = runtime.NewBroker(b.engine).Reserve(b.ctx, "mail", 1, time.Minute)
		require.NoError(t, err)
		require.Contains(t, b.ok(t, "queue:monitor"), "\nQueue mail: 1 running, limit 1, rate 100/1s; held back by the limit 1 time, by the rate 0 times.\n",
			"a line for the limited queue only")
		require.NotContains(t, b.ok(t, "queue:monitor"), "Queue other")
		require.NoError(t, runtime.NewInspector(b.engine).SetQueueLimit(b.ctx, "mail", 5))

		require.Equal(t, "Queue mail: no concurrency limit.\nQueue mail: no rate.\n", b.ok(t, "queue:limit", "mail", "off", "--rate", "off"))
		require.Equal(t, runtime.QueueLimit{}, limits().QueueLimit)
		require.Equal(t, "Queue mail: no concurrency limit.\n", b.ok(t, "queue:limit", "mail", "0"))

		for args, want := range map[[3]string]string{
			{"queue:limit", "", ""}:               "name the queue",
			{"queue:limit", "mail", "many"}:       `the limit must be a whole number of jobs, or off; got "many"`,
			{"queue:limit", "mail", "-3"}:         "the limit (-3) must not be negative: give the most jobs to run at once (1 or more), or off to remove the limit",
			{"queue:limit", "mail", "--rate=5"}:   `--rate must be N/PERIOD, such as 100/1s, or off; got "5"`,
			{"queue:limit", "mail", "--rate=5/x"}: `--rate must be N/PERIOD, such as 100/1s, or off; got "5/x"`,
			{"queue:limit", "a#b", "3"}:           "#",
		} {
			var argv []string
			for _, a := range args {
				if a != "" {
					argv = append(argv, a)
				}
			}
			code, _, stderr := b.run(t, argv...)
			require.Equal(t, 2, code, "%v: %s", argv, stderr)
			require.Contains(t, oneLine(t, stderr), want)
		}
		code, _, stderr := b.run(t, "queue:limit", "mail", "5", "--rate", "5/1us")
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "must be whole milliseconds from 1ms to 24h")
		require.Equal(t, runtime.QueueLimit{Concurrency: 5}, limits().QueueLimit, "the limit was set; the bad rate was refused")
	})
}

// queue:monitor shows a queue's fair groups: the jobs waiting in them,
// and a group at its limit.
func TestMonitorGroups(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		var jobs []runtime.Outgoing
		for i := range 3 {
			env := &runtime.Envelope{Name: "app.Job", Queue: "tenants", Body: []byte{byte(i)},
				Headers: map[string]string{runtime.GroupHeader: "acme", runtime.GroupLimitHeader: "1"}}
			jobs = append(jobs, runtime.Outgoing{Envelope: env})
		}
		require.NoError(t, b.engine.PushMany(b.ctx, jobs))
		res, err := runtime.NewBroker(b.engine).Reserve(b.ctx, "tenants", 5, time.Minute)
		require.NoError(t, err)
		require.Len(t, res.Jobs, 1, "acme is at its limit of 1")
		require.Contains(t, b.ok(t, "queue:monitor"), "\nQueue tenants: 2 jobs waiting in groups, 0 groups on the ring; acme 2 waiting, 1 running (at its limit).\n")
	})
}

// A limit on a queue nothing was dispatched to, most often a misspelt
// name, is refused with the known queues named; with --force it is set,
// and queue:monitor lists the queue with its limit.
func TestQueueLimitOnAnUnknownQueue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.push(t, "billing", greet{"a"})
		b.push(t, "mail", greet{"b"})
		code, _, stderr := b.run(t, "queue:limit", "biling", "5")
		require.Equal(t, 2, code)
		require.Contains(t, oneLine(t, stderr), `nothing has been dispatched to queue "biling" under prefix "`+b.prefix+`" (known queues: billing, mail): check the name and --prefix, or pass --force to set its limits before its first job`)
		code, _, _ = b.run(t, "queue:limit", "biling", "--rate", "5/1s")
		require.Equal(t, 2, code, "a rate is refused alike")
		l, err := runtime.NewInspector(b.engine).QueueLimits(b.ctx, "biling")
		require.NoError(t, err)
		require.Equal(t, runtime.QueueLimit{}, l.QueueLimit, "nothing was set")

		require.Equal(t, "Queue biling: at most 5 jobs at once.\n", b.ok(t, "queue:limit", "biling", "5", "--force"))
		out := b.ok(t, "queue:monitor")
		require.Contains(t, out, "\nbiling ")
		require.Contains(t, out, "\nQueue biling: 0 running, limit 5, rate none;")
	})
}

// A negative limit is an argument the command refuses by name, not a
// flag named after the number.
func TestQueueLimitNegative(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *testBundle) {
		b.push(t, "mail", greet{"a"})
		code, _, stderr := b.run(t, "queue:limit", "mail", "-1")
		require.Equal(t, 2, code)
		require.Contains(t, oneLine(t, stderr), "the limit (-1) must not be negative: give the most jobs to run at once (1 or more), or off to remove the limit")
		code, _, stderr = b.run(t, "queue:limit", "--prefix", b.prefix, "mail", "-1")
		require.Equal(t, 2, code)
		require.Contains(t, oneLine(t, stderr), "the limit (-1) must not be negative")
	})
}
