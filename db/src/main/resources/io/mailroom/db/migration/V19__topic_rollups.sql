-- Charts by topic over 1 h, 24 h and 7 d (issue 26, item 5), read from rollups instead of the raw
-- history: a console that refreshes every few seconds must not count days of outbox_attempt rows
-- (millions at thousands of emails per second) on every refresh.
--
-- outbox_rollup (outbox-core): attempts by bucket, topic and outcome, at two resolutions: 'minute'
-- rows for the short ranges (kept two days) and 'hour' rows for the week (kept eight days). One row
-- per (resolution, bucket, topic), so a week of one topic is 168 hour rows. The StatsRollup role of
-- the dispatchers fills it: it folds each closed minute of outbox_attempt (by finished_at, joined to
-- outbox_effect for the topic) exactly once, under the lock of its mark row, and samples the
-- emails waiting per topic once a minute into "waiting" (the most seen in the bucket; null: no
-- sample was taken then).
CREATE TABLE outbox_rollup (
    resolution varchar     NOT NULL,
    bucket     timestamptz NOT NULL,
    topic      varchar     NOT NULL,
    sent       bigint      NOT NULL DEFAULT 0,
    retried    bigint      NOT NULL DEFAULT 0,
    failed     bigint      NOT NULL DEFAULT 0,
    review     bigint      NOT NULL DEFAULT 0,
    other      bigint      NOT NULL DEFAULT 0,
    waiting    bigint,
    CONSTRAINT outbox_rollup_pkey PRIMARY KEY (resolution, bucket, topic),
    CONSTRAINT outbox_rollup_resolution_check CHECK (resolution IN ('minute', 'hour')),
    CONSTRAINT outbox_rollup_counts_check
        CHECK (sent >= 0 AND retried >= 0 AND failed >= 0 AND review >= 0 AND other >= 0 AND waiting >= 0)
);

COMMENT ON TABLE outbox_rollup IS
    'Attempts by minute or hour, topic and outcome (other: lease expired, released, claim lost, interrupted), and the most emails seen waiting; folded from outbox_attempt by StatsRollup.';

-- How far the rollup got: every attempt that finished before folded_until is counted, once. The
-- role locks this row (FOR UPDATE SKIP LOCKED) for each fold, so one dispatcher folds at a time and
-- the others skip; the row is made by the role's first run.
CREATE TABLE outbox_rollup_mark (
    name         varchar     NOT NULL PRIMARY KEY,
    folded_until timestamptz NOT NULL,
    sampled_at   timestamptz,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- delivery_event_rollup (delivery-events): bounces and complaints by bucket, topic and bounce type,
-- counted by the trigger that already keeps delivery_event_count, in the transaction that stores
-- the event (no writer can forget it, a rolled back event counts nothing). Only these two kinds: a
-- delivered event per sent email would make every webhook wait on one hot row.
CREATE TABLE delivery_event_rollup (
    resolution varchar     NOT NULL,
    bucket     timestamptz NOT NULL,
    topic      varchar     NOT NULL,
    kind       varchar     NOT NULL,
    bounce     varchar     NOT NULL,
    events     bigint      NOT NULL,
    CONSTRAINT delivery_event_rollup_pkey PRIMARY KEY (resolution, bucket, topic, kind, bounce),
    CONSTRAINT delivery_event_rollup_resolution_check CHECK (resolution IN ('minute', 'hour')),
    CONSTRAINT delivery_event_rollup_kind_check CHECK (kind IN ('bounced', 'complained')),
    CONSTRAINT delivery_event_rollup_events_check CHECK (events >= 0)
);

COMMENT ON TABLE delivery_event_rollup IS
    'Bounces and complaints by minute or hour of arrival, topic of the matched email (none) and bounce type (none); kept by a trigger.';

-- The V12 trigger, now also counting bounces and complaints by time. Buckets are cut with
-- date_bin from a UTC origin, so a session's time zone never moves them. The search path is pinned
-- again: CREATE OR REPLACE resets what ALTER FUNCTION set in V14.
CREATE OR REPLACE FUNCTION delivery_event_count_trigger() RETURNS trigger LANGUAGE plpgsql
    SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    t varchar := coalesce((SELECT e.topic FROM outbox_effect e WHERE e.idempotency_key = NEW.idempotency_key), 'none');
BEGIN
    INSERT INTO delivery_event_count AS c (source, kind, bounce, topic, events)
    VALUES (NEW.source, NEW.kind, coalesce(NEW.bounce_type, 'none'), t, 1)
    ON CONFLICT (source, kind, bounce, topic) DO UPDATE SET events = c.events + 1;
    IF NEW.kind IN ('bounced', 'complained') THEN
        INSERT INTO delivery_event_rollup AS r (resolution, bucket, topic, kind, bounce, events)
        VALUES ('minute', date_bin('1 minute', NEW.received_at, timestamptz '2000-01-01 00:00:00+00'), t, NEW.kind,
                coalesce(NEW.bounce_type, 'none'), 1),
               ('hour', date_bin('1 hour', NEW.received_at, timestamptz '2000-01-01 00:00:00+00'), t, NEW.kind,
                coalesce(NEW.bounce_type, 'none'), 1)
        ON CONFLICT (resolution, bucket, topic, kind, bounce) DO UPDATE SET events = r.events + 1;
    END IF;
    RETURN NULL;
END
$$;

-- the last week's bounces and complaints stored before this migration count too
INSERT INTO delivery_event_rollup (resolution, bucket, topic, kind, bounce, events)
SELECT res, date_bin(CASE res WHEN 'minute' THEN interval '1 minute' ELSE interval '1 hour' END, d.received_at,
                     timestamptz '2000-01-01 00:00:00+00'),
       coalesce(e.topic, 'none'), d.kind, coalesce(d.bounce_type, 'none'), count(*)
FROM delivery_event d
LEFT JOIN outbox_effect e ON e.idempotency_key = d.idempotency_key
CROSS JOIN (VALUES ('minute'), ('hour')) AS r(res)
WHERE d.kind IN ('bounced', 'complained')
  AND d.received_at >= now() - CASE res WHEN 'minute' THEN interval '2 days' ELSE interval '8 days' END
GROUP BY 1, 2, 3, 4, 5;
