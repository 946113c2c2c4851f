-- Delivery events counted where they are stored (issue 24, item 20). The dispatcher's
-- mailroom_delivery_events_total counted only the events its own webhook endpoint stored: bounces
-- stored by `mailroom dsn ingest` (a process of its own, run by the mail server) never reached it,
-- so the hard-bounce alert could not fire for SMTP. This table counts every event inserted, by
-- whichever process, in the inserting transaction (a trigger: no writer can forget it, and a rolled
-- back insert counts nothing); the sampler of every dispatcher exports it. It only grows: retention
-- deletes delivery_event rows, never these counts, so the counter stays monotonic.
CREATE TABLE delivery_event_count (
    source varchar NOT NULL,
    kind   varchar NOT NULL,
    bounce varchar NOT NULL,
    topic  varchar NOT NULL,
    events bigint  NOT NULL,
    CONSTRAINT delivery_event_count_pkey PRIMARY KEY (source, kind, bounce, topic),
    CONSTRAINT delivery_event_count_events_check CHECK (events >= 0)
);

COMMENT ON TABLE delivery_event_count IS
    'Delivery events ever stored, by source, kind, bounce type (none) and topic of the matched email (none); kept by a trigger.';

CREATE FUNCTION delivery_event_count_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO delivery_event_count AS c (source, kind, bounce, topic, events)
    VALUES (NEW.source, NEW.kind, coalesce(NEW.bounce_type, 'none'),
            coalesce((SELECT e.topic FROM outbox_effect e WHERE e.idempotency_key = NEW.idempotency_key), 'none'), 1)
    ON CONFLICT (source, kind, bounce, topic) DO UPDATE SET events = c.events + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER delivery_event_counted AFTER INSERT ON delivery_event
    FOR EACH ROW EXECUTE FUNCTION delivery_event_count_trigger();

-- what was stored before this migration counts too
INSERT INTO delivery_event_count (source, kind, bounce, topic, events)
SELECT d.source, d.kind, coalesce(d.bounce_type, 'none'), coalesce(e.topic, 'none'), count(*)
FROM delivery_event d LEFT JOIN outbox_effect e ON e.idempotency_key = d.idempotency_key
GROUP BY 1, 2, 3, 4;
