-- The relays' record of their passes (docs/outbox.md, "Watching it"):
-- one row per running relay, which it updates as it completes a pass over
-- the outbox table, at most once a second, so that queue:monitor
-- and the Prometheus module see from PostgreSQL alone whether a relay
-- still works: through a Redis outage too, when no pass completes.
-- UNLOGGED: its writes cost no WAL flush, and a crash that empties it
-- only makes the relays write their rows again. Safe to run again.
CREATE UNLOGGED TABLE IF NOT EXISTS {{relays}} (
    -- host/pid/random, new at each start of a relay.
    relay      text        PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    -- When the relay last completed a pass, by the database's clock.
    passed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- Jobs it relayed since it started.
    relayed    bigint      NOT NULL DEFAULT 0
);
