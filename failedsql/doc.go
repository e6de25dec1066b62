// Package failedsql keeps the failed jobs of jobgen's native jobs in a
// PostgreSQL table, through database/sql: the same database as the
// outbox (docs/outbox.md), and the same shape as Laravel's failed_jobs
// table (uuid, connection, queue, payload, exception, failed_at), with
// jobgen's name, attempts, errors and cancelled besides.
//
// # Use
//
// Open the store and set it as the engine's failed store, in every
// process that runs workers or inspects failed jobs:
//
//	store, err := failedsql.New(failedsql.Config{DB: db})
//	// ...
//	err = store.Migrate(ctx) // or the console's failed:migrate
//	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{FailedStore: store})
//
// Jobs that fail for good then move from Redis to the table, and
// runtime.Inspector.Failed (so queue:failed, queue:retry, queue:forget,
// queue:flush, queue:prune-failed and the dashboard) reads and changes
// the table. The table keeps every failed job until an operator removes
// it; queue:prune-failed --hours bounds it.
//
// # Guarantees
//
// A failed job is in Redis or in the table, or briefly in both (the
// move saves, then deletes in Redis; the unique key (queue, uuid,
// failed_at) makes a second save a no-op). A retry pushes each job under
// a mark of its own and deletes its row in the transaction that locked
// it, as the outbox relay does, so a crash anywhere neither loses a
// retried job nor pushes it twice. docs/failures.md has the argument.
package failedsql
