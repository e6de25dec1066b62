// Package pgxoutbox connects jobgen's transactional outbox to pgx v5: Tx
// makes a pgx.Tx the transaction that DispatchTx writes into, DB gives the
// relay a *sql.DB over a pgx pool, and Listen wakes the relay on the
// outbox's LISTEN channel as each transaction that wrote to it commits.
//
// It is a module of its own, so that jobgen's root module does not take
// pgx. Programs on database/sql need none of it but Listen.
//
//	tx, err := pool.Begin(ctx)
//	...
//	id, err := jobs.SendReceipt{OrderID: id}.DispatchTx(ctx, pgxoutbox.Tx(tx))
//	...
//	err = tx.Commit(ctx)
//
// The relay, in its own process or inside queue:work:
//
//	wake, err := pgxoutbox.Listen(ctx, pool, runtime.DefaultOutboxTable)
//	relay, err := outbox.NewRelay(engine, outbox.RelayConfig{DB: pgxoutbox.DB(pool), Wake: wake})
//	err = relay.Run(ctx)
//
// See docs/outbox.md.
package pgxoutbox
