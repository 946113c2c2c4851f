-- What support searches the history by (issue 26), kept as long as the history itself.
--
-- An effect's search terms ("name:value": to:ann@example.com, domain:example.com, template:receipt,
-- tag:plan=pro) are given by whoever enqueues it (email-api derives them from the email; the SQL
-- function below does the same) and written in the same statement as the effect. One row per term,
-- so a search by one term reads its index in time order and stops after a page, however many
-- emails the history holds; further terms and the effect's own columns filter the rows found.
-- The rows go with their effect (ON DELETE CASCADE: the history cleaner's batches take them along).
CREATE TABLE outbox_effect_term (
    idempotency_key varchar             NOT NULL,
    term            varchar COLLATE "C" NOT NULL,
    created_at      timestamptz         NOT NULL,
    PRIMARY KEY (idempotency_key, term),
    CONSTRAINT outbox_effect_term_effect_fk FOREIGN KEY (idempotency_key)
        REFERENCES outbox_effect (idempotency_key) ON DELETE CASCADE,
    CONSTRAINT outbox_effect_term_check CHECK (term ~ '^[a-z][a-z0-9_-]{0,31}:.' AND length(term) <= 340)
);

-- a page of one term, newest first, and the prefixes autocomplete reads (COLLATE "C": a prefix is a range)
CREATE INDEX outbox_effect_term_search_idx ON outbox_effect_term (term, created_at, idempotency_key);

-- the effect's own columns a search drives by: topic in time order, a key prefix, the words of the last error
CREATE INDEX outbox_effect_topic_idx ON outbox_effect (topic, created_at);
CREATE INDEX outbox_effect_key_prefix_idx ON outbox_effect (idempotency_key varchar_pattern_ops);
CREATE INDEX outbox_effect_error_idx ON outbox_effect USING gin (to_tsvector('simple', last_error))
    WHERE last_error IS NOT NULL;

COMMENT ON TABLE outbox_effect_term IS
    'Search terms of each effect (to:, domain:, template:, tag:), written at enqueue, removed with the effect.';

-- Earlier histories: the recipient each send recorded, and the recipient and template of the emails
-- still queued (an email stopped before its send has only its payload).
INSERT INTO outbox_effect_term (idempotency_key, term, created_at)
SELECT e.idempotency_key, t.term, e.created_at
FROM outbox_effect e
LEFT JOIN idempotency_record r ON r.effect_key = e.idempotency_key
LEFT JOIN outbox_message m ON m.id = e.message_id AND m.created_at = e.message_created_at
CROSS JOIN LATERAL (
    SELECT lower(btrim(coalesce(r.descriptor ->> 'recipient', m.payload -> 'to' ->> 'address'))) AS address,
           m.payload ->> 'template' AS template
) a
CROSS JOIN LATERAL (VALUES ('to:' || a.address), ('domain:' || split_part(a.address, '@', 2)),
                           ('template:' || a.template)) AS t(term)
WHERE t.term IS NOT NULL AND t.term !~ '^[a-z]+:$' AND position('@' IN coalesce(a.address, '')) > 1
  AND t.term ~ '^[a-z][a-z0-9_-]{0,31}:.' AND length(t.term) <= 340
ON CONFLICT DO NOTHING;

-- enqueue_email writes the terms EmailOutbox writes (EnqueueEmailConformanceTest compares the rows):
-- the V15 function becomes enqueue_email_message, and enqueue_email calls it, then adds them.
ALTER FUNCTION enqueue_email(text, text, text, text, text, json, text, text, text, text, text, text, json)
    RENAME TO enqueue_email_message;

CREATE FUNCTION enqueue_email(
    template         text,
    to_address       text,
    idempotency_key  text,
    about_type       text,
    about_id         text,
    data             json DEFAULT '{}',
    to_name          text DEFAULT NULL,
    locale           text DEFAULT 'en',
    ordering_key     text DEFAULT NULL,
    topic            text DEFAULT NULL,
    reply_to_address text DEFAULT NULL,
    reply_to_name    text DEFAULT NULL,
    headers          json DEFAULT NULL
) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
#variable_conflict use_variable
DECLARE
    message_id bigint;
    address    text;
BEGIN
    message_id := enqueue_email_message(template, to_address, idempotency_key, about_type, about_id, data, to_name,
                                        locale, ordering_key, topic, reply_to_address, reply_to_name, headers);
    address := lower(enqueue_email_strip(to_address));
    -- SearchTerms.of (email-api): the recipient, its domain, the template
    INSERT INTO outbox_effect_term (idempotency_key, term, created_at)
    SELECT idempotency_key, t.term, now()
    FROM (VALUES ('to:' || address), ('domain:' || split_part(address, '@', 2)), ('template:' || template)) AS t(term);
    RETURN message_id;
END
$$;
