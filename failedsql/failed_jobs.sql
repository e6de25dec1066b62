-- The failed jobs of jobgen's native jobs, in PostgreSQL
-- (docs/failures.md): runtime.EngineConfig.FailedStore set to a
-- failedsql.Store moves every job that fails for good here, kept until
-- it is retried, forgotten, flushed or pruned. The first six columns are
-- those of Laravel's failed_jobs table; the rest are jobgen's.
-- {{table}} is failedsql.Config.Table (jobgen_failed_jobs by default),
-- {{name}} its name without the schema. Every statement is safe to run
-- again.

CREATE TABLE IF NOT EXISTS {{table}} (
    id          bigserial   PRIMARY KEY,
    -- The job's ID.
    uuid        text        NOT NULL,
    -- The connection ('' for the engine's own).
    connection  text        NOT NULL DEFAULT '',
    -- The queue, or the partition, the job failed on.
    queue       text        NOT NULL,
    -- The job's stored envelope, as its queue held it.
    payload     bytea       NOT NULL,
    -- Why it failed for good.
    exception   text        NOT NULL,
    -- When it failed, by the Redis clock.
    failed_at   timestamptz NOT NULL,
    -- The job's name ('' for a payload that did not decode).
    name        text        NOT NULL DEFAULT '',
    -- Its attempts.
    attempts    integer     NOT NULL DEFAULT 0,
    -- The errors of its last attempts, oldest first (runtime.AttemptError).
    errors      jsonb       NOT NULL DEFAULT '[]',
    -- True for a job cancelled (queue:cancel) rather than failed.
    cancelled   boolean     NOT NULL DEFAULT false,
    -- One row per failure: a move from Redis made twice writes it once.
    UNIQUE (queue, uuid, failed_at)
);

CREATE INDEX IF NOT EXISTS {{name}}_queue_failed_at ON {{table}} (queue, failed_at);
