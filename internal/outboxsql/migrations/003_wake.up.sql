-- Version 3, up: no trigger wakes the relay any more. The statement
-- trigger of outbox.sql notified in every inserting transaction, and
-- PostgreSQL lets one notifying transaction commit at a time, a WAL
-- flush each. DispatchTx now notifies at most once every 5 ms per
-- engine, and a woken relay keeps claiming at a short cooldown while
-- rows come (docs/outbox.md, "Waking the relay"). Safe to run again.

DROP TRIGGER IF EXISTS {{name}}_notify ON {{table}};
DROP FUNCTION IF EXISTS {{table}}_notify();
