-- Mailroom lives in a schema of its own (issue 25): the scripts run with that schema as the search
-- path, so they name their tables unqualified, but a trigger function runs with the search path of
-- whatever session fires it, a business's own session included, where Mailroom's schema is not on
-- the path. Pinning the function's search path makes its unqualified names Mailroom's wherever it
-- fires; pg_temp last, so no temporary table of the session can stand in for one of ours.
ALTER FUNCTION delivery_event_count_trigger() SET search_path = "${flyway:defaultSchema}", pg_temp;
