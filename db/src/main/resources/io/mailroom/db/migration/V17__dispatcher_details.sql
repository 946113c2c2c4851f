-- What the registry of running dispatchers (V11) did not say (issue 26, item 6): how many claims
-- each one holds at its last heartbeat, and a small JSON object the process embedding the
-- dispatcher fills, which outbox-core stores without reading it (the email service: each mail
-- transport's name and circuit breaker state). Both are as of the row's heartbeat_at.
ALTER TABLE outbox_dispatcher
    ADD COLUMN claims_in_flight integer NOT NULL DEFAULT 0,
    ADD COLUMN details          jsonb,
    ADD CONSTRAINT outbox_dispatcher_claims_check CHECK (claims_in_flight >= 0),
    ADD CONSTRAINT outbox_dispatcher_details_check
        CHECK (details IS NULL OR (jsonb_typeof(details) = 'object' AND octet_length(details::text) <= 8192));

COMMENT ON COLUMN outbox_dispatcher.claims_in_flight IS
    'Claims the dispatcher held (handlers running or outcomes not yet written) at its last heartbeat.';
COMMENT ON COLUMN outbox_dispatcher.details IS
    'A JSON object the embedding process reports at each heartbeat (the email service: its transports and their breaker states).';
