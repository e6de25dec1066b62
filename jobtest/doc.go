// Package jobtest helps test code that dispatches jobgen jobs, the way
// Laravel's Bus::fake and Queue::fake do.
//
// # Faking dispatches
//
// A Fake records dispatches instead of sending them. Put it on the
// context the code under test dispatches with, then assert on what it
// recorded; the assertions are generic over the job type, so predicates
// are typed:
//
//	fake := jobtest.NewFake()
//	ctx := fake.Context(context.Background())
//
//	signUp(ctx, "ada@example.com") // dispatches SendWelcome, and more
//
//	jobtest.AssertDispatched(t, fake, func(j SendWelcome) bool { return j.To == "ada@example.com" })
//	jobtest.AssertDispatchedTimes[SendWelcome](t, fake, 1)
//	jobtest.AssertNotDispatched[ChargeCard](t, fake)
//	jobtest.AssertChained(t, fake, ResizeAvatar{UserID: 1}, NotifyTeam{UserID: 1})
//
// Dispatches returns each dispatch as recorded. For a chain, it holds
// each link with the delay, queue and connection the engine would push
// it with (Dispatch.ChainDelays, ChainQueues, ChainConnections).
//
// # Events and bulk dispatch
//
// The fake is an event dispatcher too (Laravel's Event::fake): Fire
// records the event and, as dispatches, the jobs of its queued
// listeners, and runs no listener. DispatchMany records each job:
//
//	OrderShipped{OrderID: "o-1"}.Fire(ctx)
//	jobtest.AssertFired(t, fake, func(e OrderShipped) bool { return e.OrderID == "o-1" })
//	jobtest.AssertDispatched[runtime.ListenerJob[EmailShipmentNotice, OrderShipped]](t, fake)
//
// # Running jobs for real
//
// A Harness runs the real engine and worker in-process on an embedded
// Redis (embedded://), one per harness, so integration tests need no
// server. Drain runs every job that is ready or due, and every job those
// jobs dispatch, until no job is ready:
//
//	h := jobtest.NewHarness(t, jobtest.HarnessConfig{})
//	emails.Register(h.Router, handlers)
//	ctx := h.Context(context.Background())
//	SendWelcome{To: "ada@example.com"}.Dispatch(ctx)
//	h.Drain(ctx)
//
// Delayed jobs and retries waiting out their backoff are left for a
// later Drain, once they are due. DrainAll waits for them, in real time,
// until no job is ready, delayed or reserved; give it a deadline:
//
//	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
//	defer cancel()
//	h.DrainAll(ctx) // the retries too, after their backoff
package jobtest
