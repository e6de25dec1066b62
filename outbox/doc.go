// Package outbox runs the relay of jobgen's transactional outbox: the
// process that moves the jobs committed transactions wrote to the outbox
// table (runtime.DispatchTx) to Redis, each exactly once, and deletes
// their rows.
//
// Dispatching in a transaction needs only package runtime (DispatchTx,
// DispatchManyTx, MigrateOutbox); only the process that runs a relay
// imports this package. The command queue:relay and queue:work --relay
// (package console) run one for you.
//
// # Running a relay
//
//	relay, err := outbox.NewRelay(engine, outbox.RelayConfig{DB: db})
//	if err != nil {
//		return err
//	}
//	err = relay.Run(ctx) // until ctx ends
//
// The relay reads the table that engine's EngineConfig.OutboxTable
// names. It polls every RelayConfig.Poll, and wakes at once when
// RelayConfig.Wake has a notification: the module
// github.com/jobgen/jobgen/outbox/pgxoutbox listens on the table's
// LISTEN channel. Several relays may run at once, in any processes:
// each claims rows with FOR UPDATE SKIP LOCKED.
//
// # Exactly once
//
// Each job is pushed under a mark kept in its queue's relayed set, in
// the same script call that pushes it, and the row is deleted only after
// Redis acknowledged that call; a relay that finds a row's mark pushes
// nothing. docs/outbox.md gives the whole argument, and what a crash
// after each step leaves.
//
// A row the relay can never push (an unknown kind, a bad queue name, a
// job ID another payload took) is parked: its error column says why, and
// RelayCounts.Parked counts it. Errors that may pass (Redis or
// PostgreSQL down) leave the rows for a later pass.
package outbox
