-- Send later, cancel, reschedule (issue 27, item 3).
--
-- enqueue_email gains send_at timestamptz DEFAULT NULL, its last parameter, so every earlier call
-- (positional or named) means what it meant: NULL or a time already past is "now"; more than 30 days
-- ahead (EmailOutbox.DEFAULT_MAX_SEND_AHEAD) is refused with SQLSTATE 22023 naming sendAt in the
-- error's COLUMN, as every refusal of enqueue_email. The scheduled email is written with
-- available_at = send_at, so it simply sits later in the claim's index (available_at, id) WHERE
-- status = 'pending'. A function cannot gain a parameter in place: V15's enqueue_email_message and
-- V18's enqueue_email are dropped and created again with it (a 13-argument and a 14-argument
-- overload side by side would make the 13-argument calls ambiguous).
--
-- cancel_email(key) and reschedule_email(key, send_at) change an email by its idempotency key in the
-- caller's transaction until a dispatcher claims it, as PendingMessages (outbox-core) does in Java,
-- and answer in its words (PendingChange.answer): 'cancelled', 'rescheduled', 'not_found', or
-- 'too_late:<state>' with state sending (claimed), sent, failed, review, cancelled or closed.
-- The queue row is locked FOR NO KEY UPDATE and changed only while pending; the claim skips locked
-- rows, so a claim racing with a cancel has exactly one winner. See docs/ENQUEUE_SQL.md.

DROP FUNCTION enqueue_email(text, text, text, text, text, json, text, text, text, text, text, text, json);
DROP FUNCTION enqueue_email_message(text, text, text, text, text, json, text, text, text, text, text, text, json);

-- Instant.toString of a timestamptz (UTC, seconds, then milli-, micro- or no fraction), for messages.
CREATE FUNCTION enqueue_email_instant(t timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
           || CASE WHEN us = 0 THEN '' WHEN us % 1000 = 0 THEN '.' || lpad((us / 1000)::text, 3, '0')
                   ELSE '.' || lpad(us::text, 6, '0') END || 'Z'
    FROM (SELECT (extract(microseconds FROM t)::bigint % 1000000) AS us) f
$$;

-- V15's function with send_at: the checks and the rows of EmailOutbox.message + OutboxEnqueuer.
CREATE FUNCTION enqueue_email_message(
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
    headers          json DEFAULT NULL,
    send_at          timestamptz DEFAULT NULL
) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
#variable_conflict use_column
DECLARE
    max_payload_bytes constant integer := 262144; -- EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES
    max_send_ahead constant interval := interval '30 days'; -- EmailOutbox.DEFAULT_MAX_SEND_AHEAD
    raw text;
    header record;
    header_names text[] := '{}';
    header_json text := '';
    bad integer;
    problem text;
    the_topic text;
    tag text;
    envelope text;
    bytes integer;
    message_id bigint;
BEGIN
    -- OutgoingEmail.Builder.header refuses a repeated name when it is given, before build()
    IF headers IS NOT NULL THEN
        IF json_typeof(headers) <> 'object' THEN
            PERFORM enqueue_email_refuse('headers', 'must be a JSON object of header names and values');
        END IF;
        FOR header IN SELECT key FROM json_each(headers) LOOP
            IF lower(header.key) = ANY (header_names) THEN
                PERFORM enqueue_email_refuse('headers.' || header.key, 'is given twice');
            END IF;
            header_names := header_names || lower(header.key);
        END LOOP;
    END IF;
    IF template IS NULL OR template !~ '^[a-z0-9][a-z0-9_.-]{0,63}$' THEN
        PERFORM enqueue_email_refuse('template', 'must be 1-64 of a-z, 0-9, ''_'', ''.'', ''-'', starting with a letter or digit, got '
                                     || coalesce('''' || template || '''', 'nothing'));
    END IF;
    the_topic := coalesce(topic, 'email.' || template);
    IF the_topic !~ '^[a-z0-9][a-z0-9_.-]{0,127}$' THEN
        PERFORM enqueue_email_refuse('topic', 'must be 1-128 of a-z, 0-9, ''_'', ''.'', ''-'', got ''' || the_topic || '''');
    END IF;
    tag := enqueue_email_locale(coalesce(locale, 'en'));
    to_address := enqueue_email_strip(to_address);
    envelope := '{"v":1,"template":' || enqueue_email_json_string(template) || ',"locale":' || enqueue_email_json_string(tag)
                || ',"to":' || enqueue_email_mailbox('to', to_address, to_name);
    IF reply_to_address IS NOT NULL OR reply_to_name IS NOT NULL THEN
        envelope := envelope || ',"replyTo":'
                    || enqueue_email_mailbox('replyTo', enqueue_email_strip(reply_to_address), reply_to_name);
    END IF;
    IF headers IS NOT NULL THEN
        FOR header IN SELECT key, value FROM json_each(headers) LOOP
            IF header.key !~ '^X-[A-Za-z0-9][A-Za-z0-9-]{0,73}$'
               AND header.key NOT IN ('List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Id') THEN
                PERFORM enqueue_email_refuse('headers.' || header.key,
                    'is not a header a caller may set: only X-* and [List-Id, List-Unsubscribe, List-Unsubscribe-Post]');
            END IF;
            IF json_typeof(header.value) = 'null' OR (json_typeof(header.value) = 'string'
                                                      AND enqueue_email_strip(header.value #>> '{}') = '') THEN
                PERFORM enqueue_email_refuse('headers.' || header.key, 'has no value');
            ELSIF json_typeof(header.value) <> 'string' THEN
                PERFORM enqueue_email_refuse('headers.' || header.key, 'must be a string');
            END IF;
            raw := header.value #>> '{}';
            IF enqueue_email_java_length(raw) > 900 THEN
                PERFORM enqueue_email_refuse('headers.' || header.key, 'is longer than 900 characters');
            END IF;
            bad := regexp_instr(raw, '[^\x20-\x7E]');
            IF bad > 0 THEN
                PERFORM enqueue_email_refuse('headers.' || header.key, format('contains %s at index %s: header values are printable ASCII on one line',
                    CASE WHEN substr(raw, bad, 1) IN (E'\r', E'\n') THEN 'a line break'
                         ELSE 'U+' || lpad(upper(to_hex(ascii(substr(raw, bad, 1)))), 4, '0') END, bad - 1));
            END IF;
            problem := enqueue_email_header_text_problem(raw);
            IF problem IS NOT NULL THEN
                PERFORM enqueue_email_refuse('headers.' || header.key, problem);
            END IF;
            header_json := header_json || CASE WHEN header_json = '' THEN '' ELSE ',' END
                           || enqueue_email_json_string(header.key) || ':' || enqueue_email_json_string(raw);
        END LOOP;
    END IF;
    -- SendTime.availableAt, where EmailOutbox.message checks it: before the data, after the email's own fields
    IF send_at > now() + max_send_ahead THEN
        PERFORM enqueue_email_refuse('sendAt', 'must be at most 30 days ahead, got ' || enqueue_email_instant(send_at));
    END IF;
    -- Java's strings can hold a NUL or an unpaired surrogate that PostgreSQL text cannot: JSON escapes
    -- of them become U+FFFF and U+FFFE here, which enqueue_email_json_value refuses with their path.
    raw := coalesce(data::text, '{}');
    IF strpos(raw, '\') > 0 THEN
        raw := replace(raw, '\\', '\u005c');
        IF raw ~* '\\u0000|\\ud[89ab][0-9a-f]{2}|\\ud[c-f][0-9a-f]{2}' THEN
            IF raw ~* '\\uff(fe|ff)' OR raw ~ U&'[\FFFE\FFFF]' THEN
                PERFORM enqueue_email_refuse('data', 'holds U+FFFE or U+FFFF beside a U+0000 or an unpaired surrogate');
            END IF;
            raw := regexp_replace(raw, '\\u0000', '\\uffff', 'g');
            raw := regexp_replace(raw, '\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})', '\\ufffe', 'g');
            raw := regexp_replace(raw, '(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}', '\\ufffe', 'g');
        END IF;
    END IF;
    IF json_typeof(raw::json) <> 'object' THEN
        PERFORM enqueue_email_refuse('data', 'must be a JSON object');
    END IF;
    envelope := envelope || ',"headers":{' || header_json || '},"data":' || enqueue_email_json_value('data', raw::json, 0) || '}';
    bytes := octet_length(envelope);
    IF bytes > max_payload_bytes THEN
        PERFORM enqueue_email_refuse('data', 'makes a payload of ' || bytes || ' bytes, over the limit of ' || max_payload_bytes);
    END IF;
    PERFORM enqueue_email_check_key('aggregateType', about_type);
    PERFORM enqueue_email_check_key('aggregateId', about_id);
    PERFORM enqueue_email_check_key('idempotencyKey', idempotency_key);
    IF ordering_key IS NOT NULL THEN
        PERFORM enqueue_email_check_key('orderingKey', ordering_key);
    END IF;

    -- OutboxEnqueuer's statement for one message (10 attempts; at once, or at send_at when that is ahead)
    WITH inserted AS (
        INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, ordering_key, payload,
                                    available_at, max_attempts, created_at)
        VALUES (the_topic, about_type, about_id, idempotency_key, ordering_key, envelope::jsonb,
                greatest(send_at, now()), 10, now())
        RETURNING id, created_at, idempotency_key, topic, aggregate_type, aggregate_id, max_attempts
    ), effects AS (
        INSERT INTO outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                   message_created_at, max_attempts, created_at, updated_at)
        SELECT i.idempotency_key, i.topic, i.aggregate_type, i.aggregate_id, i.id, i.created_at, i.max_attempts,
               i.created_at, i.created_at
        FROM inserted i
    )
    SELECT i.id INTO message_id FROM inserted i;
    PERFORM pg_notify('mailroom_outbox', the_topic);
    RETURN message_id;
END
$$;

-- V18's wrapper with send_at: the message, then the search terms EmailOutbox writes.
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
    headers          json DEFAULT NULL,
    send_at          timestamptz DEFAULT NULL
) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
#variable_conflict use_variable
DECLARE
    message_id bigint;
    address    text;
BEGIN
    message_id := enqueue_email_message(template, to_address, idempotency_key, about_type, about_id, data, to_name,
                                        locale, ordering_key, topic, reply_to_address, reply_to_name, headers, send_at);
    address := lower(enqueue_email_strip(to_address));
    -- SearchTerms.of (email-api): the recipient, its domain, the template
    INSERT INTO outbox_effect_term (idempotency_key, term, created_at)
    SELECT idempotency_key, t.term, now()
    FROM (VALUES ('to:' || address), ('domain:' || split_part(address, '@', 2)), ('template:' || template)) AS t(term);
    RETURN message_id;
END
$$;

COMMENT ON FUNCTION enqueue_email(text, text, text, text, text, json, text, text, text, text, text, text, json, timestamptz) IS
    'Enqueues one email in the caller''s transaction, with the checks and rows of the Java EmailOutbox.enqueue; '
    'send_at (optional, at most 30 days ahead) schedules it. Refusals are SQLSTATE 22023 naming the field in the '
    'error''s column. See docs/ENQUEUE_SQL.md.';

-- PendingMessages.change: cancels (send_at NULL) or reschedules the pending email of key; answers in
-- PendingChange.answer's words. Callers use cancel_email and reschedule_email.
CREATE FUNCTION pending_email_change(key text, send_at timestamptz) RETURNS text
    LANGUAGE plpgsql VOLATILE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
#variable_conflict use_variable
DECLARE
    effect  record;
    current text;
BEGIN
    PERFORM enqueue_email_check_key('idempotencyKey', key);
    SELECT e.message_id, e.message_created_at INTO effect FROM outbox_effect e WHERE e.idempotency_key = key;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    -- waits for a claim in progress; at READ COMMITTED the row is then read as that claim left it
    SELECT m.status INTO current FROM outbox_message m
    WHERE m.id = effect.message_id AND m.created_at = effect.message_created_at
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found'; -- finished and removed by retention
    END IF;
    IF current <> 'pending' THEN
        RETURN 'too_late:' || CASE current WHEN 'running' THEN 'sending' WHEN 'done' THEN 'sent' ELSE current END;
    END IF;
    IF send_at IS NULL THEN
        UPDATE outbox_message m SET status = 'cancelled', finished_at = now(), waiting_for = NULL, updated_at = now()
        WHERE m.id = effect.message_id AND m.created_at = effect.message_created_at;
        UPDATE outbox_effect e SET status = 'cancelled', finished_at = now(), updated_at = now()
        WHERE e.idempotency_key = key;
        RETURN 'cancelled';
    END IF;
    UPDATE outbox_message m SET available_at = greatest(send_at, now()), waiting_for = NULL, updated_at = now()
    WHERE m.id = effect.message_id AND m.created_at = effect.message_created_at;
    UPDATE outbox_effect e SET updated_at = now() WHERE e.idempotency_key = key;
    RETURN 'rescheduled';
END
$$;

-- Cancels the email of key in the caller's transaction unless a dispatcher has claimed it:
-- 'cancelled', 'not_found' or 'too_late:<state>'.
CREATE FUNCTION cancel_email(key text) RETURNS text
    LANGUAGE plpgsql VOLATILE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
BEGIN
    RETURN pending_email_change(key, NULL);
END
$$;

-- Moves the email of key to send_at (a time past means now; at most 30 days ahead, else 22023 naming
-- sendAt) in the caller's transaction unless a dispatcher has claimed it:
-- 'rescheduled', 'not_found' or 'too_late:<state>'.
CREATE FUNCTION reschedule_email(key text, send_at timestamptz) RETURNS text
    LANGUAGE plpgsql VOLATILE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
#variable_conflict use_variable
BEGIN
    IF send_at IS NULL THEN
        PERFORM enqueue_email_refuse('sendAt', 'is missing: give the time to send at (a time past means now)');
    ELSIF send_at > now() + interval '30 days' THEN -- EmailOutbox.DEFAULT_MAX_SEND_AHEAD
        PERFORM enqueue_email_refuse('sendAt', 'must be at most 30 days ahead, got ' || enqueue_email_instant(send_at));
    END IF;
    RETURN pending_email_change(key, send_at);
END
$$;

COMMENT ON FUNCTION cancel_email(text) IS
    'Cancels the email of an idempotency key in the caller''s transaction until a dispatcher claims it; answers '
    'cancelled, not_found or too_late:<state>. See docs/ENQUEUE_SQL.md.';
COMMENT ON FUNCTION reschedule_email(text, timestamptz) IS
    'Moves the email of an idempotency key to send_at (at most 30 days ahead) in the caller''s transaction until a '
    'dispatcher claims it; answers rescheduled, not_found or too_late:<state>. See docs/ENQUEUE_SQL.md.';
