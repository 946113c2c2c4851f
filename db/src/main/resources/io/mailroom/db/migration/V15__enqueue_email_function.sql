-- enqueue_email(...): the email API for code that is not Java. A business written in Python, Node,
-- Go, PHP or Ruby calls it inside its own transaction and gets exactly the rows that the Java API
-- EmailOutbox.enqueue(tx, OutgoingEmail) writes (outbox_message + outbox_effect, a pg_notify on
-- 'mailroom_outbox' delivered at commit), after the same checks: MailboxRules for addresses and
-- display names (RFC 2047 encoded words decoded first), template/topic/header names, BCP 47
-- locales (canonicalised as java.util.Locale does), NewMessage's key rules, the data's values and
-- the 256 KiB payload limit. EnqueueEmailConformanceTest runs one catalogue of inputs through both
-- and fails on any difference; docs/ENQUEUE_SQL.md is the caller's contract. The address, display-name
-- and locale rules are in V14_1.
--
-- A refused input raises SQLSTATE 22023 (invalid_parameter_value) with the field in the error's
-- COLUMN ('to.address', 'data.order.lines[2]', 'idempotencyKey': the Java API's field names) and
-- the message "<field> <problem>". A duplicate idempotency key is the unique violation 23505 on
-- outbox_effect_pkey, as for the Java API.
--
-- enqueue_email fixes its search_path to the schema Flyway migrates, so a caller's search_path can
-- neither hide the tables nor shadow them; the helpers run under it. Those that run once per value
-- of data (refuse, json_string, json_value) carry no SET of their own: one per call halves the
-- function's speed on a large payload. The others keep it, so they read the same when called alone.

CREATE FUNCTION enqueue_email_refuse(field text, problem text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = field || ' ' || problem, COLUMN = field,
        HINT = 'The field is in this error''s column name; see docs/ENQUEUE_SQL.md.';
END
$$;

-- Java counts strings in UTF-16 code units: a character above U+FFFF counts twice.
CREATE FUNCTION enqueue_email_java_length(s text) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
    SELECT length(s) + length(regexp_replace(s, '[^\U00010000-\U0010FFFF]', '', 'g'))
$$;

-- Java's Character.isWhitespace: what String.strip() removes and isBlank() ignores.
CREATE FUNCTION enqueue_email_strip(s text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
    SELECT regexp_replace(s, '^[\t\n\x0B\f\r\x1C-\x1F \u1680\u2000-\u2006\u2008-\u200A\u2028\u2029\u205F\u3000]+'
                             '|[\t\n\x0B\f\r\x1C-\x1F \u1680\u2000-\u2006\u2008-\u200A\u2028\u2029\u205F\u3000]+$', '', 'g')
$$;

-- EmailOutbox's Json.string: the JSON string Java writes, byte for byte.
CREATE FUNCTION enqueue_email_json_string(s text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    buf text := replace(replace(s, '\', '\\'), '"', '\"');
    c text;
BEGIN
    IF buf ~ '[\x01-\x1F\u2028\u2029]' THEN
        buf := replace(replace(replace(buf, E'\n', '\n'), E'\r', '\r'), E'\t', '\t');
        FOR c IN SELECT DISTINCT m[1] FROM regexp_matches(buf, '([\x01-\x1F\u2028\u2029])', 'g') AS m LOOP
            buf := replace(buf, c, '\u' || lpad(to_hex(ascii(c)), 4, '0'));
        END LOOP;
    END IF;
    RETURN '"' || buf || '"';
END
$$;

-- EmailOutbox's Json.value over a JSON document: its compact text as Java writes it, or a refusal
-- naming the value's path. U+FFFF and U+FFFE stand for a NUL and an unpaired surrogate (see enqueue_email).
CREATE FUNCTION enqueue_email_json_value(path text, v json, depth integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    buf text;
    s text;
    entry record;
    seen text[] := '{}';
BEGIN
    IF depth > 32 THEN
        PERFORM enqueue_email_refuse(path, 'is nested more than 32 levels deep');
    END IF;
    CASE json_typeof(v)
        WHEN 'string' THEN
            s := v #>> '{}';
            IF strpos(s, U&'\FFFF') > 0 THEN
                PERFORM enqueue_email_refuse(path, 'contains U+0000, which PostgreSQL text cannot hold');
            ELSIF strpos(s, U&'\FFFE') > 0 THEN
                PERFORM enqueue_email_refuse(path, 'contains an unpaired surrogate');
            END IF;
            RETURN enqueue_email_json_string(s);
        WHEN 'object' THEN
            buf := '{';
            FOR entry IN SELECT key, value FROM json_each(v) LOOP
                IF entry.key = '' THEN
                    PERFORM enqueue_email_refuse(path, 'has a key that is not a non-empty string: ');
                ELSIF strpos(entry.key, U&'\FFFF') > 0 THEN
                    PERFORM enqueue_email_refuse(path, 'has a key that contains U+0000, which PostgreSQL text cannot hold');
                ELSIF strpos(entry.key, U&'\FFFE') > 0 THEN
                    PERFORM enqueue_email_refuse(path, 'has a key that contains an unpaired surrogate');
                ELSIF entry.key = ANY (seen) THEN
                    PERFORM enqueue_email_refuse(path, format('has the key %s twice', enqueue_email_json_string(entry.key)));
                END IF;
                seen := seen || entry.key;
                buf := buf || CASE WHEN cardinality(seen) > 1 THEN ',' ELSE '' END || enqueue_email_json_string(entry.key)
                       || ':' || enqueue_email_json_value(path || '.' || entry.key, entry.value, depth + 1);
            END LOOP;
            RETURN buf || '}';
        WHEN 'array' THEN
            SELECT '[' || coalesce(string_agg(enqueue_email_json_value(path || '[' || (i - 1) || ']', e, depth + 1), ','
                                              ORDER BY i), '') || ']'
            INTO buf FROM json_array_elements(v) WITH ORDINALITY AS a(e, i);
            RETURN buf;
        ELSE
            RETURN btrim(v::text, E' \t\n\r'); -- a number as the caller wrote it, true, false, null
    END CASE;
END
$$;

-- The keys of NewMessage: not blank, at most 200 UTF-16 units, no control character.
CREATE FUNCTION enqueue_email_check_key(field text, value text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
BEGIN
    IF value IS NULL OR enqueue_email_strip(value) = '' THEN
        PERFORM enqueue_email_refuse(field, 'must not be blank');
    ELSIF enqueue_email_java_length(value) > 200 THEN
        PERFORM enqueue_email_refuse(field, 'must be at most 200 characters, got ' || enqueue_email_java_length(value));
    ELSIF value ~ '[\x01-\x1F\x7F-\x9F]' THEN
        PERFORM enqueue_email_refuse(field, 'must not contain control characters');
    END IF;
END
$$;

-- {"address":...,"name":...} after MailboxRules, or a refusal naming <field>.address / <field>.name.
CREATE FUNCTION enqueue_email_mailbox(field text, address text, name text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    problem text := enqueue_email_address_problem(address);
BEGIN
    IF problem IS NOT NULL THEN
        PERFORM enqueue_email_refuse(field || '.address', problem);
    END IF;
    problem := enqueue_email_name_problem(name);
    IF problem IS NOT NULL THEN
        PERFORM enqueue_email_refuse(field || '.name', problem);
    END IF;
    RETURN '{"address":' || enqueue_email_json_string(address)
           || coalesce(',"name":' || enqueue_email_json_string(name), '') || '}';
END
$$;

-- Writes one email into the outbox in the caller's transaction, as EmailOutbox.enqueue does, and
-- returns the outbox_message id. NULL for an optional argument means "not given".
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
#variable_conflict use_column
DECLARE
    max_payload_bytes constant integer := 262144; -- EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES
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

    -- OutboxEnqueuer's statement for one message (NewMessage.of: at once, 10 attempts)
    WITH inserted AS (
        INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, ordering_key, payload,
                                    available_at, max_attempts, created_at)
        VALUES (the_topic, about_type, about_id, idempotency_key, ordering_key, envelope::jsonb, now(), 10, now())
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

COMMENT ON FUNCTION enqueue_email(text, text, text, text, text, json, text, text, text, text, text, text, json) IS
    'Enqueues one email in the caller''s transaction, with the checks and rows of the Java EmailOutbox.enqueue; '
    'refusals are SQLSTATE 22023 naming the field in the error''s column. See docs/ENQUEUE_SQL.md.';
