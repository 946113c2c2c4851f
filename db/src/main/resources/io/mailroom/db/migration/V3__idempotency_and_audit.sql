-- The idempotency store: one row per business effect that touches the outside world, reserved
-- before the side effect and completed in the same transaction that finishes the outbox message.
-- A row left 'reserved' is an unknown outcome (the process died or the provider never answered).
CREATE TABLE idempotency_record (
    effect_key        varchar     NOT NULL,
    fingerprint       varchar     NOT NULL,
    state             varchar     NOT NULL,
    reservations      integer     NOT NULL DEFAULT 1,
    reserved_by       varchar,
    first_reserved_at timestamptz NOT NULL,
    reserved_at       timestamptz NOT NULL,
    completed_at      timestamptz,
    result_ref        varchar,
    last_error        varchar,
    descriptor        jsonb,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_record_pkey PRIMARY KEY (effect_key),
    CONSTRAINT idempotency_record_state_check
        CHECK (state IN ('reserved', 'succeeded', 'failed', 'ambiguous')),
    CONSTRAINT idempotency_record_last_error_check CHECK (length(last_error) <= 2000)
);
CREATE INDEX idempotency_record_open_idx ON idempotency_record (state, reserved_at)
    WHERE state IN ('reserved', 'ambiguous');
CREATE INDEX idempotency_record_updated_idx ON idempotency_record (updated_at);

-- Every action a person took (retry, resend, confirm-sent, cancel, pause, resume).
CREATE TABLE audit_log (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at              timestamptz NOT NULL DEFAULT now(),
    actor           varchar     NOT NULL,
    role            varchar     NOT NULL,
    action          varchar     NOT NULL,
    idempotency_key varchar,
    reason          varchar,
    detail          jsonb
);
CREATE INDEX audit_log_key_idx ON audit_log (idempotency_key, at);
CREATE INDEX audit_log_at_idx ON audit_log (at);
