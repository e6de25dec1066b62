-- Version 2: an absolute due time for the rows of At(t), and the
-- completions of CompleteTx (docs/outbox.md).

-- When the job becomes ready, by the database's clock: At(t). NULL for a
-- row whose delay_ms counts from the commit.
ALTER TABLE {{table}} ADD COLUMN IF NOT EXISTS run_at timestamptz;

-- One row per job whose handler called CompleteTx, written in the
-- handler's own transaction: a job reserved again after that transaction
-- committed is acked without running (runtime.CompleteTx). The primary
-- key makes a second attempt's CompleteTx fail, aborting its
-- transaction, while the first's row stands.
CREATE TABLE IF NOT EXISTS {{completions}} (
    -- The job's ID.
    id           text        PRIMARY KEY,
    -- The attempt, and the reservation token, that completed it.
    attempt      integer     NOT NULL,
    token        text        NOT NULL DEFAULT '',
    completed_at timestamptz NOT NULL DEFAULT now()
);

-- The worker prunes rows older than EngineConfig.CompletionRetention.
CREATE INDEX IF NOT EXISTS {{name}}_completed_at ON {{completions}} (completed_at);
