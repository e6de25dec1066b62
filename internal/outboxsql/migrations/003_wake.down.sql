-- Version 3, down: the statement trigger of outbox.sql again, which
-- notifies the relays' channel in every transaction that inserts rows.
-- Safe to run again.

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
