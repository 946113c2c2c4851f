-- After the provider accepts: what it reports next (delivered, deferred, bounced, complained), and
-- the suppression list those reports feed (DESIGN.md section 11).
--
-- delivery_event is history, like outbox_attempt: appended once per event a provider reported
-- (signed webhook) or a mail server returned (RFC 3464 delivery status notification), never
-- updated. A delivery is accepted once: (source, delivery_id) is the webhook-id of the Standard
-- Webhooks scheme (or the DSN's own id), and seq numbers the events of one delivery, so a replayed
-- or duplicated delivery inserts nothing. An event matched to no email keeps idempotency_key null:
-- an orphan, kept and shown to operators, never dropped. Retention follows the support history
-- (HistoryCleaner removes the events of an effect with it, and orphans by age), so the table is not
-- partitioned.
CREATE TABLE delivery_event (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source              varchar     NOT NULL,
    delivery_id         varchar     NOT NULL,
    seq                 integer     NOT NULL DEFAULT 0,
    received_at         timestamptz NOT NULL DEFAULT now(),
    occurred_at         timestamptz,
    kind                varchar     NOT NULL,
    bounce_type         varchar,
    provider_event      varchar     NOT NULL,
    provider_message_id varchar,
    idempotency_key     varchar,
    recipient           varchar,
    diagnostic_code     varchar,
    description         varchar,
    -- did this event move its email's delivery state? false for an orphan, an unknown type, or an
    -- event that arrived after a later state (out of order), which stays visible in the timeline
    applied             boolean     NOT NULL DEFAULT false,
    CONSTRAINT delivery_event_delivery_unique UNIQUE (source, delivery_id, seq),
    CONSTRAINT delivery_event_kind_check
        CHECK (kind IN ('delivered', 'deferred', 'bounced', 'complained', 'unknown')),
    CONSTRAINT delivery_event_bounce_check
        CHECK ((kind = 'bounced') = (bounce_type IS NOT NULL) AND bounce_type IN ('hard', 'soft')),
    CONSTRAINT delivery_event_seq_check CHECK (seq >= 0),
    CONSTRAINT delivery_event_source_check CHECK (length(source) BETWEEN 1 AND 100),
    CONSTRAINT delivery_event_delivery_id_check CHECK (length(delivery_id) BETWEEN 1 AND 200),
    CONSTRAINT delivery_event_provider_event_check CHECK (length(provider_event) BETWEEN 1 AND 200),
    CONSTRAINT delivery_event_provider_message_id_check CHECK (length(provider_message_id) <= 500),
    CONSTRAINT delivery_event_recipient_check CHECK (length(recipient) <= 320),
    CONSTRAINT delivery_event_diagnostic_check CHECK (length(diagnostic_code) <= 1000),
    CONSTRAINT delivery_event_description_check CHECK (length(description) <= 2000)
);
-- The timeline of one email.
CREATE INDEX delivery_event_key_idx ON delivery_event (idempotency_key, received_at);
-- Operators' list of events that matched no email.
CREATE INDEX delivery_event_orphan_idx ON delivery_event (received_at) WHERE idempotency_key IS NULL;
-- Rates and retention walk events by arrival.
CREATE INDEX delivery_event_received_idx ON delivery_event (received_at);

COMMENT ON TABLE delivery_event IS
    'Delivery events reported after the provider accepted an email (webhooks, DSNs); once per (source, delivery_id, seq).';

-- The delivery state of an email, on its effect (the support spine): null until a provider reports
-- something after "accepted". It only moves forward, by rank: deferred < delivered < bounced <
-- complained, so "delivered" arriving after "bounced" keeps the bounce visible.
ALTER TABLE outbox_effect
    ADD COLUMN delivery_state      varchar,
    ADD COLUMN delivery_detail     varchar,
    ADD COLUMN delivery_updated_at timestamptz,
    ADD CONSTRAINT outbox_effect_delivery_state_check
        CHECK (delivery_state IN ('deferred', 'delivered', 'bounced', 'complained')),
    ADD CONSTRAINT outbox_effect_delivery_detail_check CHECK (length(delivery_detail) <= 2000),
    ADD CONSTRAINT outbox_effect_delivery_pair_check
        CHECK ((delivery_state IS NULL) = (delivery_updated_at IS NULL));
-- Support's lists of bounced and complained emails, newest first.
CREATE INDEX outbox_effect_delivery_idx ON outbox_effect (delivery_state, delivery_updated_at)
    WHERE delivery_state IN ('bounced', 'complained');

-- Events are matched to their email by the provider's message id stored on send (result_ref): the
-- HTTP provider's id, or the Message-ID an SMTP send carried.
CREATE INDEX idempotency_record_result_ref_idx ON idempotency_record (result_ref)
    WHERE result_ref IS NOT NULL;

-- The suppression list: addresses no email is sent to. address is normalized (trimmed, lower
-- case, the domain in its ASCII form). One active row per (address, reason), so a per-topic policy
-- can look past a complaint but never past a hard bounce; lifting keeps the row (who, when, why),
-- and every change is also written to audit_log in the same transaction.
CREATE TABLE suppression (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    address     varchar     NOT NULL,
    reason      varchar     NOT NULL,
    detail      varchar,
    event_id    bigint,
    created_at  timestamptz NOT NULL DEFAULT now(),
    created_by  varchar     NOT NULL,
    lifted_at   timestamptz,
    lifted_by   varchar,
    lift_reason varchar,
    CONSTRAINT suppression_reason_check
        CHECK (reason IN ('hard_bounce', 'complaint', 'soft_bounces', 'manual')),
    CONSTRAINT suppression_address_check CHECK (length(address) BETWEEN 3 AND 320),
    CONSTRAINT suppression_detail_check CHECK (length(detail) <= 2000),
    CONSTRAINT suppression_lift_check
        CHECK ((lifted_at IS NULL) = (lifted_by IS NULL) AND (lifted_at IS NULL) = (lift_reason IS NULL)),
    CONSTRAINT suppression_lift_reason_check CHECK (length(lift_reason) <= 2000)
);
CREATE UNIQUE INDEX suppression_active_idx ON suppression (address, reason) WHERE lifted_at IS NULL;
CREATE INDEX suppression_history_idx ON suppression (address, created_at);
CREATE INDEX suppression_created_idx ON suppression (created_at);

-- Soft bounces in a row per address since its last delivery or lift: past the configured run the
-- address is suppressed with reason soft_bounces.
CREATE TABLE soft_bounce_run (
    address       varchar     NOT NULL PRIMARY KEY,
    bounces       integer     NOT NULL,
    first_at      timestamptz NOT NULL,
    last_at       timestamptz NOT NULL,
    last_event_id bigint,
    CONSTRAINT soft_bounce_run_bounces_check CHECK (bounces >= 1)
);
