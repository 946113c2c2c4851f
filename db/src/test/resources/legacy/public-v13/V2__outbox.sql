-- The transactional outbox.
--
-- outbox_message is the hot queue: small, rewritten on every state change, partitioned by day of
-- creation so that finished rows leave by DETACH PARTITION + DROP TABLE rather than mass DELETE
-- (see DESIGN.md section 8). Its primary key must contain the partition key, so uniqueness of the
-- business effect lives in outbox_effect, which is not partitioned and outlives the hot rows.

CREATE SEQUENCE outbox_message_id_seq AS bigint CACHE 1;

CREATE TABLE outbox_message (
    id              bigint      NOT NULL DEFAULT nextval('outbox_message_id_seq'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    topic           varchar     NOT NULL,
    aggregate_type  varchar     NOT NULL,
    aggregate_id    varchar     NOT NULL,
    idempotency_key varchar     NOT NULL,
    ordering_key    varchar,
    payload         jsonb       NOT NULL,
    status          varchar     NOT NULL DEFAULT 'pending',
    available_at    timestamptz NOT NULL DEFAULT now(),
    attempts        integer     NOT NULL DEFAULT 0,
    max_attempts    integer     NOT NULL DEFAULT 10,
    claim_version   bigint      NOT NULL DEFAULT 0,
    claimed_by      varchar,
    claimed_at      timestamptz,
    lease_until     timestamptz,
    last_error      varchar,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    CONSTRAINT outbox_message_pkey PRIMARY KEY (id, created_at),
    CONSTRAINT outbox_message_status_check
        CHECK (status IN ('pending', 'running', 'done', 'failed', 'review', 'cancelled')),
    CONSTRAINT outbox_message_attempts_check CHECK (attempts >= 0 AND max_attempts >= 1),
    -- a running row always has a lease; nothing else has one
    CONSTRAINT outbox_message_lease_check CHECK ((status = 'running') = (lease_until IS NOT NULL)),
    CONSTRAINT outbox_message_topic_check CHECK (length(topic) BETWEEN 1 AND 200),
    CONSTRAINT outbox_message_key_check CHECK (length(idempotency_key) BETWEEN 1 AND 200),
    CONSTRAINT outbox_message_last_error_check CHECK (length(last_error) <= 2000)
) PARTITION BY RANGE (created_at);

COMMENT ON TABLE outbox_message IS
    'Hot queue of the transactional outbox; daily partitions (outbox_message_pYYYYMMDD, UTC) plus a default one.';

-- The claim reads only this partial index: pending rows in (available_at, id) order.
CREATE INDEX outbox_message_claim_idx ON outbox_message (available_at, id) WHERE status = 'pending';
-- The lease rescuer reads only running rows by lease expiry.
CREATE INDEX outbox_message_lease_idx ON outbox_message (lease_until) WHERE status = 'running';
-- Ordering keys: "is an earlier message of this key still pending or running?"
CREATE INDEX outbox_message_ordering_idx ON outbox_message (ordering_key, id)
    WHERE ordering_key IS NOT NULL AND status IN ('pending', 'running');

-- The default partition is the safety net: a row never fails to insert because a day's partition
-- is missing. Daily partitions are created ahead by the retention maintainer; these cover the days
-- around the migration. Storage parameters cannot be set on a partitioned parent, so every
-- partition gets the queue's autovacuum settings when it is created.
CREATE TABLE outbox_message_default PARTITION OF outbox_message DEFAULT
    WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
          autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02,
          autovacuum_vacuum_cost_delay = 0);

DO $$
DECLARE
    day date;
BEGIN
    FOR day IN SELECT generate_series((now() AT TIME ZONE 'UTC')::date - 1,
                                      (now() AT TIME ZONE 'UTC')::date + 3, interval '1 day')::date
    LOOP
        EXECUTE format(
            'CREATE TABLE %I PARTITION OF outbox_message FOR VALUES FROM (%L) TO (%L) '
            'WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, '
            'autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02, '
            'autovacuum_vacuum_cost_delay = 0)',
            'outbox_message_p' || to_char(day, 'YYYYMMDD'),
            day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
    END LOOP;
END
$$;

-- One row per business effect (idempotency key), written in the enqueuing transaction. It makes
-- the key unique across all partitions, points at the current hot row, and keeps the final outcome
-- after the hot row is gone: the spine of the support history ("all emails of order 102").
CREATE TABLE outbox_effect (
    idempotency_key    varchar     NOT NULL,
    topic              varchar     NOT NULL,
    aggregate_type     varchar     NOT NULL,
    aggregate_id       varchar     NOT NULL,
    message_id         bigint      NOT NULL,
    message_created_at timestamptz NOT NULL,
    status             varchar     NOT NULL DEFAULT 'pending',
    attempts           integer     NOT NULL DEFAULT 0,
    max_attempts       integer     NOT NULL,
    last_error         varchar,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    finished_at        timestamptz,
    resend_of          varchar,
    CONSTRAINT outbox_effect_pkey PRIMARY KEY (idempotency_key),
    CONSTRAINT outbox_effect_status_check
        CHECK (status IN ('pending', 'running', 'done', 'failed', 'review', 'cancelled')),
    CONSTRAINT outbox_effect_last_error_check CHECK (length(last_error) <= 2000)
);
CREATE INDEX outbox_effect_aggregate_idx ON outbox_effect (aggregate_type, aggregate_id, created_at);
CREATE INDEX outbox_effect_status_idx ON outbox_effect (status, updated_at);
CREATE INDEX outbox_effect_created_idx ON outbox_effect (created_at);

-- Every attempt, appended when it ends (done, retry, failed, review, lease expired, claim lost).
-- Support reads it as the timeline of an effect; retention deletes it in small batches.
CREATE TABLE outbox_attempt (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    idempotency_key varchar     NOT NULL,
    message_id      bigint      NOT NULL,
    attempt         integer     NOT NULL,
    claim_version   bigint      NOT NULL,
    worker          varchar     NOT NULL,
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz NOT NULL,
    outcome         varchar     NOT NULL,
    error           varchar,
    detail          jsonb,
    CONSTRAINT outbox_attempt_outcome_check
        CHECK (outcome IN ('done', 'retry', 'failed', 'review', 'lease_expired', 'released', 'claim_lost')),
    CONSTRAINT outbox_attempt_error_check CHECK (length(error) <= 2000)
);
CREATE INDEX outbox_attempt_key_idx ON outbox_attempt (idempotency_key, attempt);
CREATE INDEX outbox_attempt_finished_idx ON outbox_attempt (finished_at);

-- Cluster-wide switches every dispatcher polls: scope '*' pauses everything, a topic pauses one.
CREATE TABLE outbox_control (
    scope      varchar     NOT NULL PRIMARY KEY,
    paused     boolean     NOT NULL DEFAULT false,
    reason     varchar,
    updated_by varchar,
    updated_at timestamptz NOT NULL DEFAULT now()
);
