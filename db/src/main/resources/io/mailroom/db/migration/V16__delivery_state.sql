-- The delivery state of an email moves off outbox_effect into a table of delivery-events' own
-- (issue 25: each module owns its tables). One row per email a provider reported something about
-- after "accepted"; it only moves forward, by rank: deferred < delivered < bounced (soft < hard) <
-- complained, so "delivered" arriving after "bounced" keeps the bounce visible. The row leaves with
-- its email's effect (delivery-events' retention step).
CREATE TABLE delivery_state (
    idempotency_key varchar     NOT NULL,
    state           varchar     NOT NULL,
    detail          varchar,
    updated_at      timestamptz NOT NULL,
    CONSTRAINT delivery_state_pkey PRIMARY KEY (idempotency_key),
    CONSTRAINT delivery_state_state_check CHECK (state IN ('deferred', 'delivered', 'bounced', 'complained')),
    CONSTRAINT delivery_state_detail_check CHECK (length(detail) <= 2000)
);
-- Support's lists of bounced and complained emails, newest first.
CREATE INDEX delivery_state_listed_idx ON delivery_state (state, updated_at, idempotency_key)
    WHERE state IN ('bounced', 'complained');

COMMENT ON TABLE delivery_state IS
    'The delivery state of each email a provider reported on after accepting it; owned by delivery-events.';

INSERT INTO delivery_state (idempotency_key, state, detail, updated_at)
SELECT idempotency_key, delivery_state, delivery_detail, delivery_updated_at
FROM outbox_effect
WHERE delivery_state IS NOT NULL;

DROP INDEX outbox_effect_delivery_idx;
ALTER TABLE outbox_effect
    DROP COLUMN delivery_state,
    DROP COLUMN delivery_detail,
    DROP COLUMN delivery_updated_at;
