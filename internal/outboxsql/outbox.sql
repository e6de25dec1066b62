-- The transactional outbox of jobgen (docs/outbox.md). DispatchTx writes
-- one row per job, in the caller's transaction; a relay pushes the rows to
-- Redis and deletes them. {{table}} is runtime.EngineConfig.OutboxTable
-- (jobgen_outbox by default) and {{channel}} the same name with "." as
-- "_". Every statement is safe to run again.

CREATE TABLE IF NOT EXISTS {{table}} (
    -- Commit order, near enough: relays claim rows by it.
    seq           bigserial   PRIMARY KEY,
    -- The job's ID, or the batch's ID for a row of kind 'batch'.
    id            text        NOT NULL,
    -- 'job': payload is the job's stored envelope, as Dispatch pushes it.
    -- 'batch': payload is the batch's record and its jobs (msgpack).
    kind          text        NOT NULL DEFAULT 'job',
    -- The connection the job was dispatched on ('' for the default).
    connection    text        NOT NULL DEFAULT '',
    -- The queue, or the partition, the job goes to.
    queue         text        NOT NULL,
    -- The job's name (the batch's, for a batch row), for people reading.
    name          text        NOT NULL,
    -- The delay asked for, from created_at.
    delay_ms      bigint      NOT NULL DEFAULT 0,
    -- The unique lock the relay takes before it pushes, if any.
    unique_key    text        NOT NULL DEFAULT '',
    unique_for_ms bigint      NOT NULL DEFAULT 0,
    payload       bytea       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- Set when the relay cannot push the row, which it then leaves alone.
    error         text
);

-- The relays' claim reads the rows waiting, oldest first: without this
-- index, on a table PostgreSQL has not analyzed yet, each claim would read
-- and sort the whole backlog.
CREATE INDEX IF NOT EXISTS {{name}}_claim ON {{table}} (connection, seq) WHERE error IS NULL;

-- A unique job waiting here holds its key: DispatchTx of another job with
-- the same connection and key writes nothing (INSERT ... ON CONFLICT DO
-- NOTHING) and returns a *DuplicateError, as Dispatch would. Parked rows
-- hold nothing. Once a relay has pushed a row, the lock in Redis holds
-- the key instead.
CREATE UNIQUE INDEX IF NOT EXISTS {{name}}_unique ON {{table}} (connection, unique_key)
    WHERE unique_key <> '' AND error IS NULL;

-- A relay waits on LISTEN {{channel}}; every transaction that inserts
-- rows wakes it once, as it commits.
CREATE OR REPLACE FUNCTION {{table}}_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{{channel}}', '');
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER {{name}}_notify
    AFTER INSERT ON {{table}}
    FOR EACH STATEMENT EXECUTE FUNCTION {{table}}_notify();
