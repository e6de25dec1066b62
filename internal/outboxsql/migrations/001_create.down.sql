-- Version 1 down: drop the outbox table, its trigger and notify function,
-- and its relays table. The rows waiting in the outbox go with it:
-- outbox:migrate refuses unless --force when there are any.
DROP TABLE IF EXISTS {{table}};
DROP FUNCTION IF EXISTS {{table}}_notify();
DROP TABLE IF EXISTS {{relays}};
