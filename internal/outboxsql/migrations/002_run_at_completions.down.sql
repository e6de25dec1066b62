-- Version 2 down: the completions table and the run_at column go. A row
-- of At(t) would then run at once, and a job completed in a transaction
-- whose ack Redis has not taken would run again: outbox:migrate refuses
-- unless --force when there are any.
DROP TABLE IF EXISTS {{completions}};
ALTER TABLE {{table}} DROP COLUMN IF EXISTS run_at;
