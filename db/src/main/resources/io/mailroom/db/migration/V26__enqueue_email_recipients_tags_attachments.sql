-- enqueue_email takes what the Java API OutgoingEmail / EmailOutbox takes since issue 27: several To,
-- Cc and Bcc recipients (RecipientRules), tags (TagRules) and attachments (AttachmentRules, the default
-- AttachmentLimits, stored as AttachmentStore stores them), with the same fields and messages in its
-- refusals, the same envelope (version 1, byte for byte, for an email that uses none of them; else
-- version 2, as EmailOutbox.envelope writes it) and the same search terms (SearchTerms.of).
--
-- Five optional parameters are added after send_at, each DEFAULT NULL, so every earlier call
-- (positional with 5, 13 or 14 arguments, or named) means what it meant:
--   to_list     json  [{"address": ..., "name": ...}, ...]: the To recipients, given INSTEAD of
--                     to_address/to_name (pass to_address => NULL: it has no default); both is refused
--   cc, bcc     json  the same shape
--   tags        json  {"category": "invoice", ...}
--   attachments json  [{"filename": ..., "contentType": ..., "content": <base64>, "contentId": <inline only>}]
-- A function cannot gain parameters in place: V22's enqueue_email and enqueue_email_message are
-- dropped, and enqueue_email is created again doing the whole of EmailOutbox.enqueue (the message,
-- its effect, its search terms, its attachments). See docs/ENQUEUE_SQL.md.

DROP FUNCTION enqueue_email(text, text, text, text, text, json, text, text, text, text, text, text, json, timestamptz);
DROP FUNCTION enqueue_email_message(text, text, text, text, text, json, text, text, text, text, text, text, json, timestamptz);

-- A member of a JSON object the caller gave: its text (a JSON string), NULL when absent or JSON null,
-- or a refusal naming it when it is another type.
CREATE FUNCTION enqueue_email_text(field text, v json) RETURNS text
    LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF v IS NULL OR json_typeof(v) = 'null' THEN
        RETURN NULL;
    ELSIF json_typeof(v) <> 'string' THEN
        PERFORM enqueue_email_refuse(field, 'must be a string');
    END IF;
    RETURN v #>> '{}';
END
$$;

-- A list of mailboxes given as JSON ([{"address": ..., "name": ...}]): the addresses (stripped, as
-- OutgoingEmail.Mailbox does) and names, in order; NULL and JSON null are the empty list.
CREATE FUNCTION enqueue_email_mailbox_list(field text, v json, OUT addresses text[], OUT names text[])
    LANGUAGE plpgsql IMMUTABLE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    item record;
    member record;
    at text;
BEGIN
    addresses := '{}';
    names := '{}';
    IF v IS NULL OR json_typeof(v) = 'null' THEN
        RETURN;
    END IF;
    IF json_typeof(v) <> 'array' THEN
        PERFORM enqueue_email_refuse(field, 'must be a JSON array of {"address": ..., "name": ...} objects');
    END IF;
    FOR item IN SELECT e, i - 1 AS i FROM json_array_elements(v) WITH ORDINALITY AS a(e, i) LOOP
        at := field || '[' || item.i || ']';
        IF json_typeof(item.e) <> 'object' THEN
            PERFORM enqueue_email_refuse(at, 'must be a JSON object {"address": ..., "name": ...}');
        END IF;
        FOR member IN SELECT key FROM json_each(item.e) WHERE key NOT IN ('address', 'name') LOOP
            PERFORM enqueue_email_refuse(at || '.' || member.key, 'is not a mailbox field: give address and name');
        END LOOP;
        addresses := addresses || enqueue_email_strip(enqueue_email_text(at || '.address', item.e -> 'address'));
        names := names || enqueue_email_text(at || '.name', item.e -> 'name');
    END LOOP;
END
$$;

-- TagRules.printable: the first 80 code points, a control character (below U+0020, U+007F) as \uXXXX.
CREATE FUNCTION enqueue_email_printable(s text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    buf text := left(s, 80);
    c text;
BEGIN
    FOR c IN SELECT DISTINCT m[1] FROM regexp_matches(buf, '([\x01-\x1F\x7F])', 'g') AS m LOOP
        buf := replace(buf, c, '\u' || lpad(to_hex(ascii(c)), 4, '0'));
    END LOOP;
    RETURN buf;
END
$$;

-- AttachmentRules.filename: what is wrong with an attachment's filename, or NULL.
CREATE FUNCTION enqueue_email_filename_problem(name text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    pos integer;
    c text;
    idx integer;
BEGIN
    IF name IS NULL OR enqueue_email_strip(name) = '' THEN
        RETURN 'is missing';
    ELSIF enqueue_email_java_length(name) > 255 THEN
        RETURN 'is longer than 255 characters';
    ELSIF name <> enqueue_email_strip(name) THEN
        RETURN 'starts or ends with white space';
    ELSIF name IN ('.', '..') THEN
        RETURN 'is ''' || name || ''', not a file''s name';
    END IF;
    pos := regexp_instr(name, '[/\\\x01-\x1F\x7F-\x9F\u2028\u2029]');
    IF pos = 0 THEN
        RETURN NULL;
    END IF;
    c := substr(name, pos, 1);
    idx := enqueue_email_java_length(left(name, pos - 1)); -- Java's index counts UTF-16 units
    IF c IN ('/', '\') THEN
        RETURN format('contains a path separator ''%s'' at index %s: give the file''s name only', c, idx);
    END IF;
    RETURN format('contains the control character U+%s at index %s', lpad(upper(to_hex(ascii(c))), 4, '0'), idx);
END
$$;

-- EmailOutbox.enqueue in the caller's transaction: the checks of OutgoingEmail.Builder and
-- EmailOutbox.message in their order (the first problem is the one reported), then the rows of
-- OutboxEnqueuer (message, effect, search terms) and AttachmentStore (content, refs).
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
    send_at          timestamptz DEFAULT NULL,
    to_list          json DEFAULT NULL,
    cc               json DEFAULT NULL,
    bcc              json DEFAULT NULL,
    tags             json DEFAULT NULL,
    attachments      json DEFAULT NULL
) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
#variable_conflict use_column
DECLARE
    max_payload_bytes constant integer := 262144;       -- EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES
    max_send_ahead constant interval := interval '30 days'; -- EmailOutbox.DEFAULT_MAX_SEND_AHEAD
    max_attachments constant integer := 10;              -- AttachmentLimits.DEFAULT_MAX_COUNT
    max_attachment_bytes constant integer := 10485760;   -- AttachmentLimits.DEFAULT_MAX_BYTES_EACH
    max_attachments_bytes constant bigint := 20971520;   -- AttachmentLimits.DEFAULT_MAX_BYTES_TOTAL
    raw text;
    header record;
    header_names text[] := '{}';
    header_json text := '';
    item record;
    bad integer;
    problem text;
    the_topic text;
    the_key text := idempotency_key;
    tag text;
    envelope text;
    bytes integer;
    message_id bigint;
    -- recipients: the three lists, and every address as the terms and the duplicate check key it
    to_l record;
    cc_l record;
    bcc_l record;
    lists text[] := ARRAY['to', 'cc', 'bcc'];
    list_field text;
    list_addresses text[];
    list_names text[];
    field text;
    seen text[] := '{}';
    seen_fields text[] := '{}';
    to_json text;
    list_json text;
    recipients_json text := '';
    total integer;
    v2 boolean;
    -- tags
    tag_names text[] := '{}';
    tag_values text[] := '{}';
    tag_json text := '';
    -- attachments, in the order given
    att_filenames text[] := '{}';
    att_types text[] := '{}';
    att_cids text[] := '{}';
    att_contents bytea[] := '{}';
    att_shas text[] := '{}';
    att_json text := '';
    cids_seen text[] := '{}';
    att_total bigint := 0;
    i integer;
    content_b64 text;
BEGIN
    -- OutgoingEmail.Builder refuses a repeated header or tag name, and an attachment without bytes,
    -- when it is given, before build()
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
    IF tags IS NOT NULL AND json_typeof(tags) <> 'null' THEN
        IF json_typeof(tags) <> 'object' THEN
            PERFORM enqueue_email_refuse('tags', 'must be a JSON object of tag names and values');
        END IF;
        FOR item IN SELECT key, value FROM json_each(tags) LOOP
            IF lower(item.key) = ANY (SELECT lower(n) FROM unnest(tag_names) n) THEN
                PERFORM enqueue_email_refuse('tags.' || item.key, 'is given twice');
            END IF;
            tag_names := tag_names || item.key;
            tag_values := tag_values || enqueue_email_text('tags.' || item.key, item.value);
        END LOOP;
    END IF;
    IF attachments IS NOT NULL AND json_typeof(attachments) <> 'null' THEN
        IF json_typeof(attachments) <> 'array' THEN
            PERFORM enqueue_email_refuse('attachments',
                'must be a JSON array of {"filename", "contentType", "content" (base64), "contentId" (inline only)} objects');
        END IF;
        FOR item IN SELECT e, n - 1 AS n FROM json_array_elements(attachments) WITH ORDINALITY AS a(e, n) LOOP
            field := 'attachments[' || item.n || ']';
            IF json_typeof(item.e) <> 'object' THEN
                PERFORM enqueue_email_refuse(field,
                    'must be a JSON object {"filename", "contentType", "content" (base64), "contentId" (inline only)}');
            END IF;
            FOR header IN SELECT key FROM json_each(item.e)
                          WHERE key NOT IN ('filename', 'contentType', 'content', 'contentId') LOOP
                PERFORM enqueue_email_refuse(field || '.' || header.key,
                    'is not an attachment field: give filename, contentType, content (base64) and contentId (inline only)');
            END LOOP;
            att_filenames := att_filenames || enqueue_email_text(field || '.filename', item.e -> 'filename');
            att_types := att_types || enqueue_email_text(field || '.contentType', item.e -> 'contentType');
            att_cids := att_cids || enqueue_email_text(field || '.contentId', item.e -> 'contentId');
            content_b64 := enqueue_email_text(field || '.content', item.e -> 'content');
            IF content_b64 IS NULL THEN
                PERFORM enqueue_email_refuse(field || '.content', 'is missing');
            END IF;
            BEGIN
                att_contents := att_contents || decode(content_b64, 'base64');
            EXCEPTION WHEN invalid_parameter_value THEN
                PERFORM enqueue_email_refuse(field || '.content', 'is not base64 (RFC 4648, padded): ' || SQLERRM);
            END;
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

    -- RecipientRules.check: one To given as to_address/to_name, or the list to_list; cc; bcc
    IF to_list IS NOT NULL AND json_typeof(to_list) <> 'null' THEN
        IF to_address IS NOT NULL OR to_name IS NOT NULL THEN
            PERFORM enqueue_email_refuse('to', 'is given both as to_address/to_name and as to_list: give one (to_address => NULL)');
        END IF;
        to_l := enqueue_email_mailbox_list('to', to_list);
    ELSE
        SELECT ARRAY[enqueue_email_strip(to_address)] AS addresses, ARRAY[to_name] AS names INTO to_l;
    END IF;
    cc_l := enqueue_email_mailbox_list('cc', cc);
    bcc_l := enqueue_email_mailbox_list('bcc', bcc);
    IF cardinality(to_l.addresses) = 0 THEN
        PERFORM enqueue_email_refuse('to', 'is missing');
    ELSIF cardinality(to_l.addresses) > 50 THEN
        PERFORM enqueue_email_refuse('to', 'has ' || cardinality(to_l.addresses) || ' addresses; at most 50');
    ELSIF cardinality(cc_l.addresses) > 50 THEN
        PERFORM enqueue_email_refuse('cc', 'has ' || cardinality(cc_l.addresses) || ' addresses; at most 50');
    ELSIF cardinality(bcc_l.addresses) > 50 THEN
        PERFORM enqueue_email_refuse('bcc', 'has ' || cardinality(bcc_l.addresses) || ' addresses; at most 50');
    END IF;
    total := cardinality(to_l.addresses) + cardinality(cc_l.addresses) + cardinality(bcc_l.addresses);
    IF total > 100 THEN
        PERFORM enqueue_email_refuse('to', 'with cc and bcc makes ' || total || ' recipients; at most 100 in all');
    END IF;
    v2 := cardinality(to_l.addresses) > 1 OR cardinality(cc_l.addresses) > 0 OR cardinality(bcc_l.addresses) > 0
          OR cardinality(tag_names) > 0 OR cardinality(att_contents) > 0;
    FOREACH list_field IN ARRAY lists LOOP
        CASE list_field
            WHEN 'to' THEN list_addresses := to_l.addresses; list_names := to_l.names;
            WHEN 'cc' THEN list_addresses := cc_l.addresses; list_names := cc_l.names;
            ELSE list_addresses := bcc_l.addresses; list_names := bcc_l.names;
        END CASE;
        list_json := '';
        FOR i IN 1 .. coalesce(cardinality(list_addresses), 0) LOOP
            -- a sole To keeps its historic field name, to.address
            field := CASE WHEN list_field = 'to' AND cardinality(list_addresses) = 1 THEN 'to'
                          ELSE list_field || '[' || (i - 1) || ']' END;
            to_json := enqueue_email_mailbox(field, list_addresses[i], list_names[i]);
            bad := array_position(seen, lower(list_addresses[i]));
            IF bad IS NOT NULL THEN
                PERFORM enqueue_email_refuse(field || '.address', 'is already a recipient as ' || seen_fields[bad]
                                             || '; an address may appear once across to, cc and bcc');
            END IF;
            seen := seen || lower(list_addresses[i]);
            seen_fields := seen_fields || field;
            list_json := list_json || CASE WHEN i > 1 THEN ',' ELSE '' END || to_json;
        END LOOP;
        IF list_field = 'to' THEN
            recipients_json := CASE WHEN v2 THEN '[' || list_json || ']' ELSE list_json END;
        ELSIF list_json <> '' THEN
            recipients_json := recipients_json || ',"' || list_field || '":[' || list_json || ']';
        END IF;
    END LOOP;

    -- TagRules.problem: the count, then each name (field tags), then its value (field tags.<name>)
    IF cardinality(tag_names) > 10 THEN
        PERFORM enqueue_email_refuse('tags', 'has ' || cardinality(tag_names) || ' tags; at most 10');
    END IF;
    FOR i IN 1 .. cardinality(tag_names) LOOP
        IF tag_names[i] = '' THEN
            PERFORM enqueue_email_refuse('tags', 'has a tag without a name');
        ELSIF tag_names[i] !~ '^[A-Za-z0-9_-]{1,64}$' THEN
            PERFORM enqueue_email_refuse('tags', 'has a tag name that is not 1-64 of A-Z, a-z, 0-9, ''_'', ''-'': '''
                                         || enqueue_email_printable(tag_names[i]) || '''');
        ELSIF tag_names[i] = 'idempotency_key' THEN
            PERFORM enqueue_email_refuse('tags', 'has the tag name ''idempotency_key'', which Mailroom sets itself (the idempotency key)');
        END IF;
        IF tag_values[i] IS NULL OR tag_values[i] = '' THEN
            PERFORM enqueue_email_refuse('tags.' || tag_names[i], 'has no value');
        ELSIF enqueue_email_java_length(tag_values[i]) > 256 THEN
            PERFORM enqueue_email_refuse('tags.' || tag_names[i], 'is longer than 256 characters ('
                                         || enqueue_email_java_length(tag_values[i]) || ')');
        ELSIF tag_values[i] !~ '^[A-Za-z0-9_.:@/-]+$' THEN -- its length is checked above (a regex counts to 255)
            PERFORM enqueue_email_refuse('tags.' || tag_names[i], 'must be 1-256 of A-Z, a-z, 0-9 and ''_'', ''-'', ''.'', '
                                         || ''':'', ''@'', ''/'' (no space, ''='', '';'', '','', ''+'' or quote)');
        END IF;
        tag_json := tag_json || CASE WHEN i > 1 THEN ',' ELSE '' END
                    || enqueue_email_json_string(tag_names[i]) || ':' || enqueue_email_json_string(tag_values[i]);
    END LOOP;

    envelope := '{"v":' || CASE WHEN v2 THEN 2 ELSE 1 END || ',"template":' || enqueue_email_json_string(template)
                || ',"locale":' || enqueue_email_json_string(tag) || ',"to":' || recipients_json;
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
            IF lower(header.key) = 'x-mailroom-tag' THEN
                PERFORM enqueue_email_refuse('headers.' || header.key,
                    'is the header the dispatcher writes the tags in; give tags with tag(name, value)');
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
                         -- Java names the UTF-16 unit: the high surrogate of a character above U+FFFF
                         ELSE 'U+' || lpad(upper(to_hex(CASE WHEN ascii(substr(raw, bad, 1)) > 65535
                                                             THEN 55296 + ((ascii(substr(raw, bad, 1)) - 65536) >> 10)
                                                             ELSE ascii(substr(raw, bad, 1)) END)), 4, '0') END, bad - 1));
            END IF;
            problem := enqueue_email_header_text_problem(raw);
            IF problem IS NOT NULL THEN
                PERFORM enqueue_email_refuse('headers.' || header.key, problem);
            END IF;
            header_json := header_json || CASE WHEN header_json = '' THEN '' ELSE ',' END
                           || enqueue_email_json_string(header.key) || ':' || enqueue_email_json_string(raw);
        END LOOP;
    END IF;

    -- AttachmentRules.check, then EmailOutbox.message's AttachmentLimits (the defaults)
    IF cardinality(att_contents) > 99 THEN
        PERFORM enqueue_email_refuse('attachments', 'has ' || cardinality(att_contents)
                                     || ' attachments, more than 99, the most any configuration allows');
    END IF;
    FOR i IN 1 .. cardinality(att_contents) LOOP
        field := 'attachments[' || (i - 1) || ']';
        problem := enqueue_email_filename_problem(att_filenames[i]);
        IF problem IS NOT NULL THEN
            PERFORM enqueue_email_refuse(field || '.filename', problem);
        END IF;
        IF att_types[i] IS NULL
           OR att_types[i] !~ '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$' THEN
            PERFORM enqueue_email_refuse(field || '.contentType', 'must be a media type type/subtype without parameters, like'
                                         || ' application/pdf, got ' || coalesce('''' || att_types[i] || '''', 'nothing'));
        ELSIF lower(split_part(att_types[i], '/', 1)) IN ('multipart', 'message') THEN
            PERFORM enqueue_email_refuse(field || '.contentType', 'is a ' || lower(split_part(att_types[i], '/', 1))
                                         || ' type, which mail clients read as the message''s structure; send it as application/octet-stream');
        END IF;
        IF att_cids[i] IS NOT NULL THEN
            IF att_cids[i] !~ '^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$' THEN
                PERFORM enqueue_email_refuse(field || '.contentId', 'must be 1-100 of A-Z, a-z, 0-9, ''.'', ''_'', ''@'', ''+'', ''-'','
                                             || ' starting with a letter or digit, got ''' || att_cids[i] || '''');
            ELSIF lower(att_cids[i]) = ANY (cids_seen) THEN
                PERFORM enqueue_email_refuse(field || '.contentId', '''' || att_cids[i] || ''' is given twice');
            END IF;
            cids_seen := cids_seen || lower(att_cids[i]);
        END IF;
        IF octet_length(att_contents[i]) = 0 THEN
            PERFORM enqueue_email_refuse(field || '.content', 'has no bytes');
        ELSIF octet_length(att_contents[i]) > 104857600 THEN
            PERFORM enqueue_email_refuse(field || '.content', 'is ' || octet_length(att_contents[i])
                                         || ' bytes, more than 104857600, the most any configuration allows');
        END IF;
    END LOOP;
    IF cardinality(att_contents) > max_attachments THEN
        PERFORM enqueue_email_refuse('attachments', 'has ' || cardinality(att_contents) || ' attachments, over the limit of '
                                     || max_attachments);
    END IF;
    FOR i IN 1 .. cardinality(att_contents) LOOP
        IF octet_length(att_contents[i]) > max_attachment_bytes THEN
            PERFORM enqueue_email_refuse('attachments[' || (i - 1) || '].content', 'is ' || octet_length(att_contents[i])
                                         || ' bytes, over the limit of ' || max_attachment_bytes || ' bytes per attachment');
        END IF;
        att_total := att_total + octet_length(att_contents[i]);
        att_shas := att_shas || encode(sha256(att_contents[i]), 'hex');
        -- AttachmentEnvelope.write
        att_json := att_json || CASE WHEN i > 1 THEN ',' ELSE '' END
                    || '{"filename":' || enqueue_email_json_string(att_filenames[i])
                    || ',"contentType":' || enqueue_email_json_string(att_types[i])
                    || ',"sha256":"' || att_shas[i] || '","size":' || octet_length(att_contents[i])
                    || coalesce(',"contentId":' || enqueue_email_json_string(att_cids[i]), '') || '}';
    END LOOP;
    IF att_total > max_attachments_bytes THEN
        PERFORM enqueue_email_refuse('attachments', 'are ' || att_total || ' bytes together, over the limit of '
                                     || max_attachments_bytes || ' bytes per email');
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
    -- EmailOutbox.envelope: version 2 omits empty headers, tags and attachments
    IF NOT v2 OR header_json <> '' THEN
        envelope := envelope || ',"headers":{' || header_json || '}';
    END IF;
    IF tag_json <> '' THEN
        envelope := envelope || ',"tags":{' || tag_json || '}';
    END IF;
    IF att_json <> '' THEN
        envelope := envelope || ',"attachments":[' || att_json || ']';
    END IF;
    envelope := envelope || ',"data":' || enqueue_email_json_value('data', raw::json, 0) || '}';
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
        VALUES (the_topic, about_type, about_id, the_key, ordering_key, envelope::jsonb,
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

    -- SearchTerms.of: to: for every recipient, domain: for each of their domains, the template, tag:name=value
    INSERT INTO outbox_effect_term (idempotency_key, term, created_at)
    SELECT the_key, t.term, now()
    FROM (SELECT 'to:' || a FROM unnest(seen) a
          UNION SELECT 'domain:' || split_part(a, '@', 2) FROM unnest(seen) a
          UNION SELECT 'template:' || template
          UNION SELECT 'tag:' || n || '=' || v FROM unnest(tag_names, tag_values) AS g(n, v)) AS t(term);

    -- AttachmentStore.write: each content once, locked in hash order (the upsert), then the email's refs
    IF cardinality(att_contents) > 0 THEN
        INSERT INTO email_attachment_content (sha256, content, size, created_at, last_used_at)
        SELECT DISTINCT ON (a.h COLLATE "C") a.h, a.c, octet_length(a.c), now(), now()
        FROM unnest(att_shas, att_contents) AS a(h, c)
        ORDER BY a.h COLLATE "C"
        ON CONFLICT (sha256) DO UPDATE SET last_used_at = now();
        INSERT INTO email_attachment_ref (idempotency_key, position, sha256, filename, content_type, content_id)
        SELECT the_key, (a.n - 1)::smallint, a.h, a.f, a.t, a.cid
        FROM unnest(att_shas, att_filenames, att_types, att_cids) WITH ORDINALITY AS a(h, f, t, cid, n);
    END IF;
    PERFORM pg_notify('mailroom_outbox', the_topic);
    RETURN message_id;
END
$$;

COMMENT ON FUNCTION enqueue_email(text, text, text, text, text, json, text, text, text, text, text, text, json, timestamptz,
                                  json, json, json, json, json) IS
    'Enqueues one email in the caller''s transaction, with the checks and rows of the Java EmailOutbox.enqueue; '
    'send_at (optional, at most 30 days ahead) schedules it; to_list, cc, bcc, tags and attachments (JSON) as in '
    'OutgoingEmail. Refusals are SQLSTATE 22023 naming the field in the error''s column. See docs/ENQUEUE_SQL.md.';
