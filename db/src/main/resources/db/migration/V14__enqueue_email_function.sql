-- enqueue_email(...): the email API for code that is not Java. A business written in Python, Node,
-- Go, PHP or Ruby calls it inside its own transaction and gets exactly the rows that the Java API
-- EmailOutbox.enqueue(tx, OutgoingEmail) writes (outbox_message + outbox_effect, a pg_notify on
-- 'mailroom_outbox' delivered at commit), after the same checks: MailboxRules for addresses and
-- display names (RFC 2047 encoded words decoded first), template/topic/header names, BCP 47
-- locales (canonicalised as java.util.Locale does), NewMessage's key rules, the data's values and
-- the 256 KiB payload limit. EnqueueEmailConformanceTest runs one catalogue of inputs through both
-- and fails on any difference; docs/ENQUEUE_SQL.md is the caller's contract.
--
-- A refused input raises SQLSTATE 22023 (invalid_parameter_value) with the field in the error's
-- COLUMN ('to.address', 'data.order.lines[2]', 'idempotencyKey': the Java API's field names) and
-- the message "<field> <problem>". A duplicate idempotency key is the unique violation 23505 on
-- outbox_effect_pkey, as for the Java API.
--
-- Every function fixes its search_path to the schema Flyway migrates, so a caller's search_path
-- can neither hide the tables nor shadow them.

CREATE FUNCTION enqueue_email_refuse(field text, problem text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
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

-- MailboxRules.firstForbiddenInLine + describe: ISO controls, U+2028/U+2029, bidi controls; null if none.
CREATE FUNCTION enqueue_email_forbidden_in_line(s text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    at integer := regexp_instr(s, '[\x01-\x1F\x7F-\x9F\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]');
    cp integer;
BEGIN
    IF at = 0 THEN
        RETURN NULL;
    END IF;
    cp := ascii(substr(s, at, 1));
    RETURN format('%s U+%s at index %s',
                  CASE WHEN cp IN (1564, 8206, 8207) OR cp BETWEEN 8234 AND 8238 OR cp BETWEEN 8294 AND 8297
                           THEN 'a bidi control'
                       WHEN cp IN (8232, 8233) THEN 'a line separator'
                       ELSE 'a control character' END,
                  lpad(upper(to_hex(cp)), 4, '0'), enqueue_email_java_length(substr(s, 1, at - 1)));
END
$$;

-- One RFC 2047 encoded word, decoded as EncodedWords.word does; raises 'undecodable: <problem>'.
CREATE FUNCTION enqueue_email_decode_word(charset_name text, encoding text, encoded text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    name text := split_part(charset_name, '*', 1);
    pg_encoding text;
    raw bytea := ''::bytea;
    padded text;
    i integer := 1;
    c text;
    cp integer;
    hi integer;
    lo integer;
BEGIN
    -- Java's Charset.forName knows more charsets than these; an unknown one is refused, never guessed.
    pg_encoding := CASE lower(name)
        WHEN 'utf-8' THEN 'UTF8' WHEN 'utf8' THEN 'UTF8'
        WHEN 'us-ascii' THEN 'ASCII' WHEN 'ascii' THEN 'ASCII'
        WHEN 'iso-8859-1' THEN 'LATIN1' WHEN 'iso8859-1' THEN 'LATIN1' WHEN 'iso_8859-1' THEN 'LATIN1'
        WHEN 'latin1' THEN 'LATIN1' WHEN 'l1' THEN 'LATIN1'
        WHEN 'iso-8859-2' THEN 'LATIN2' WHEN 'iso-8859-5' THEN 'ISO_8859_5' WHEN 'iso-8859-7' THEN 'ISO_8859_7'
        WHEN 'iso-8859-9' THEN 'LATIN5' WHEN 'iso-8859-15' THEN 'LATIN9'
        WHEN 'windows-1250' THEN 'WIN1250' WHEN 'windows-1251' THEN 'WIN1251' WHEN 'windows-1252' THEN 'WIN1252'
        WHEN 'cp1252' THEN 'WIN1252' WHEN 'koi8-r' THEN 'KOI8R' WHEN 'koi8-u' THEN 'KOI8U'
        ELSE NULL END;
    IF pg_encoding IS NULL THEN
        RAISE EXCEPTION 'undecodable: has an RFC 2047 encoded word in charset ''%'', which is not known', name;
    END IF;
    IF upper(encoding) = 'B' THEN
        padded := CASE length(encoded) % 4 WHEN 2 THEN encoded || '==' WHEN 3 THEN encoded || '=' ELSE encoded END;
        -- java.util.Base64's basic decoder: the alphabet, and '=' only as the last one or two characters
        IF padded !~ '^[A-Za-z0-9+/]*(|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)$' OR length(padded) % 4 <> 0 THEN
            RAISE EXCEPTION 'undecodable: has an RFC 2047 encoded word whose base64 is malformed';
        END IF;
        raw := decode(padded, 'base64');
    ELSE
        WHILE i <= length(encoded) LOOP
            c := substr(encoded, i, 1);
            IF c = '_' THEN
                raw := raw || '\x20'::bytea;
            ELSIF c = '=' THEN
                IF i + 2 > length(encoded) OR substr(encoded, i + 1, 2) !~ '^[0-9A-Fa-f]{2}$' THEN
                    RAISE EXCEPTION 'undecodable: has an RFC 2047 encoded word with a malformed ''=XX'' escape';
                END IF;
                raw := raw || decode(substr(encoded, i + 1, 2), 'hex');
                i := i + 2;
            ELSE
                -- Java writes each UTF-16 unit's low byte, as ByteArrayOutputStream.write(char) does
                cp := ascii(c);
                IF cp > 65535 THEN
                    hi := 55296 + ((cp - 65536) >> 10);
                    lo := 56320 + ((cp - 65536) & 1023);
                    raw := raw || decode(lpad(to_hex(hi & 255), 2, '0') || lpad(to_hex(lo & 255), 2, '0'), 'hex');
                ELSE
                    raw := raw || decode(lpad(to_hex(cp & 255), 2, '0'), 'hex');
                END IF;
            END IF;
            i := i + 1;
        END LOOP;
    END IF;
    IF position('\x00'::bytea IN raw) > 0 THEN
        -- PostgreSQL text cannot hold the NUL that Java would decode and then refuse as a control character
        RAISE EXCEPTION 'undecodable: has an RFC 2047 encoded word that decodes to a control character U+0000';
    END IF;
    IF pg_encoding = 'ASCII' THEN
        IF encode(raw, 'hex') ~ '^(..)*[89a-f]' THEN
            RAISE EXCEPTION 'undecodable: has an RFC 2047 encoded word that is not valid US-ASCII';
        END IF;
        pg_encoding := 'UTF8';
    END IF;
    BEGIN
        RETURN convert_from(raw, pg_encoding);
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
        RAISE EXCEPTION 'undecodable: has an RFC 2047 encoded word that is not valid %', upper(name);
    END;
END
$$;

-- MailboxRules.headerTextProblem: what the text or its decoded encoded words hold that one header line may not; null if fine.
CREATE FUNCTION enqueue_email_header_text_problem(s text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    word constant text := '=\?([^?\t\n\x0B\f\r ]+)\?([BbQq])\?([^?\t\n\x0B\f\r ]*)\?=';
    bad text := enqueue_email_forbidden_in_line(s);
    current text := s;
    rest text;
    decoded text;
    m text[];
    at integer;
BEGIN
    IF bad IS NOT NULL THEN
        RETURN 'contains ' || bad;
    END IF;
    IF current !~ word THEN
        RETURN NULL;
    END IF;
    BEGIN
        FOR depth IN 1..4 LOOP
            EXIT WHEN current !~ word;
            rest := current;
            decoded := '';
            LOOP
                m := regexp_match(rest, word);
                EXIT WHEN m IS NULL;
                at := regexp_instr(rest, word);
                decoded := decoded || substr(rest, 1, at - 1) || enqueue_email_decode_word(m[1], m[2], m[3]);
                rest := substr(rest, at + length(regexp_substr(rest, word)));
            END LOOP;
            current := decoded || rest;
        END LOOP;
    EXCEPTION WHEN raise_exception THEN
        IF SQLERRM LIKE 'undecodable: %' THEN
            RETURN substr(SQLERRM, length('undecodable: ') + 1);
        END IF;
        RAISE;
    END;
    IF current ~ word THEN
        RETURN 'has encoded words nested more than 4 levels deep';
    END IF;
    bad := enqueue_email_forbidden_in_line(current);
    IF bad IS NOT NULL THEN
        RETURN 'has an RFC 2047 encoded word that decodes to ' || bad;
    END IF;
    RETURN NULL;
END
$$;

-- MailboxRules.addressProblem: null if the (already stripped) address is acceptable.
CREATE FUNCTION enqueue_email_address_problem(address text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    bad integer;
    at integer;
    local_part text;
    labels text[];
    label text;
BEGIN
    IF address IS NULL OR address = '' THEN
        RETURN 'is missing';
    END IF;
    bad := regexp_instr(address, '[^\x21-\x7E]');
    IF bad > 0 THEN
        RETURN 'contains a character outside printable ASCII at index ' || (bad - 1);
    END IF;
    IF length(address) > 254 THEN
        RETURN 'must be at most 254 characters, got ' || length(address);
    END IF;
    at := length(address) - strpos(reverse(address), '@') + 1;
    IF strpos(address, '@') = 0 OR at = 1 OR at = length(address) OR strpos(address, '@') <> at THEN
        RETURN 'must be local-part@domain, e.g. name@example.com';
    END IF;
    local_part := substr(address, 1, at - 1);
    IF length(local_part) > 64 THEN
        RETURN 'must have at most 64 characters before the @';
    END IF;
    IF local_part LIKE '.%' OR local_part LIKE '%.' OR strpos(local_part, '..') > 0 THEN
        RETURN 'must not start or end with a dot or contain two dots in a row before the @';
    END IF;
    bad := regexp_instr(local_part, '[^A-Za-z0-9!#$%&''*+/=?^_`{|}~.-]');
    IF bad > 0 THEN
        RETURN format('contains ''%s'' before the @, which is not allowed (no quoted or commented local parts)',
                      substr(local_part, bad, 1));
    END IF;
    labels := string_to_array(substr(address, at + 1), '.');
    IF cardinality(labels) < 2 THEN
        RETURN 'must have a domain with at least two labels, e.g. example.com';
    END IF;
    FOREACH label IN ARRAY labels LOOP
        IF label = '' OR length(label) > 63 THEN
            RETURN 'must have domain labels of 1 to 63 characters';
        END IF;
        IF label LIKE '-%' OR label LIKE '%-' THEN
            RETURN 'must not have a domain label that starts or ends with a hyphen';
        END IF;
        bad := regexp_instr(label, '[^A-Za-z0-9-]');
        IF bad > 0 THEN
            RETURN format('contains ''%s'' in the domain, which is not a valid host name', substr(label, bad, 1));
        END IF;
    END LOOP;
    IF labels[cardinality(labels)] ~ '^[0-9]+$' THEN
        RETURN 'must have a domain name, not an IP address';
    END IF;
    RETURN NULL;
END
$$;

-- MailboxRules.displayNameProblem for a given (non-null) name: null if acceptable.
CREATE FUNCTION enqueue_email_name_problem(name text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    problem text;
BEGIN
    IF enqueue_email_strip(name) = '' THEN
        RETURN 'must not be blank';
    END IF;
    problem := enqueue_email_header_text_problem(name);
    IF problem IS NOT NULL THEN
        RETURN problem;
    END IF;
    IF length(name) > 200 THEN
        RETURN 'must be at most 200 characters, got ' || length(name);
    END IF;
    RETURN NULL;
END
$$;

-- new Locale.Builder().setLanguageTag(tag).build().toLanguageTag(): the tag as java.util.Locale
-- writes it (cases, legacy tags, old ISO codes, extlang, sorted extensions), or a refusal.
CREATE FUNCTION enqueue_email_locale(tag text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
DECLARE
    legacy text;
    parts text[];
    n integer;
    i integer := 1;
    language text := '';
    script text;
    region text;
    variants text := '';
    extensions jsonb := '{}';
    singleton text;
    subtags text[];
    private_use text;
    unicode_attributes text[] := '{}';
    unicode_keywords jsonb := '{}';
    keyword text;
    result text;
BEGIN
    IF tag = '' THEN
        PERFORM enqueue_email_refuse('locale', 'names no language: ''''');
    END IF;
    legacy := CASE lower(tag)
        WHEN 'art-lojban' THEN 'jbo' WHEN 'cel-gaulish' THEN 'xtg-x-cel-gaulish' WHEN 'en-gb-oed' THEN 'en-GB-x-oed'
        WHEN 'i-ami' THEN 'ami' WHEN 'i-bnn' THEN 'bnn' WHEN 'i-default' THEN 'en-x-i-default'
        WHEN 'i-enochian' THEN 'und-x-i-enochian' WHEN 'i-hak' THEN 'hak' WHEN 'i-klingon' THEN 'tlh'
        WHEN 'i-lux' THEN 'lb' WHEN 'i-mingo' THEN 'see-x-i-mingo' WHEN 'i-navajo' THEN 'nv' WHEN 'i-pwn' THEN 'pwn'
        WHEN 'i-tao' THEN 'tao' WHEN 'i-tay' THEN 'tay' WHEN 'i-tsu' THEN 'tsu' WHEN 'no-bok' THEN 'nb'
        WHEN 'no-nyn' THEN 'nn' WHEN 'sgn-be-fr' THEN 'sfb' WHEN 'sgn-be-nl' THEN 'vgt' WHEN 'sgn-ch-de' THEN 'sgg'
        WHEN 'zh-guoyu' THEN 'cmn' WHEN 'zh-hakka' THEN 'hak' WHEN 'zh-min' THEN 'nan-x-zh-min'
        WHEN 'zh-min-nan' THEN 'nan' WHEN 'zh-xiang' THEN 'hsn' ELSE NULL END;
    parts := string_to_array(coalesce(legacy, tag), '-');
    n := cardinality(parts);
    IF parts[1] ~ '^[A-Za-z]{2,8}$' THEN
        language := lower(parts[1]);
        i := 2;
        FOR k IN 1..3 LOOP
            EXIT WHEN i > n OR parts[i] !~ '^[A-Za-z]{3}$';
            IF k = 1 THEN
                language := lower(parts[i]); -- Java takes the first extlang as the language
            END IF;
            i := i + 1;
        END LOOP;
        IF i <= n AND parts[i] ~ '^[A-Za-z]{4}$' THEN
            script := upper(substr(parts[i], 1, 1)) || lower(substr(parts[i], 2));
            i := i + 1;
        END IF;
        IF i <= n AND parts[i] ~ '^([A-Za-z]{2}|[0-9]{3})$' THEN
            region := upper(parts[i]);
            i := i + 1;
        END IF;
        WHILE i <= n AND parts[i] ~ '^([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3})$' LOOP
            variants := variants || '-' || parts[i]; -- Java keeps a variant's case
            i := i + 1;
        END LOOP;
        WHILE i <= n AND parts[i] ~ '^[A-WYZa-wyz]$' LOOP
            singleton := lower(parts[i]);
            i := i + 1;
            subtags := '{}';
            WHILE i <= n AND parts[i] ~ '^[A-Za-z0-9]{2,8}$' LOOP
                subtags := subtags || lower(parts[i]);
                i := i + 1;
            END LOOP;
            IF cardinality(subtags) = 0 THEN
                PERFORM enqueue_email_refuse('locale', 'is not a BCP 47 language tag: ''' || tag || '''');
            END IF;
            IF NOT extensions ? singleton THEN -- a repeated extension is ignored, as Java does
                extensions := extensions || jsonb_build_object(singleton, to_jsonb(subtags));
            END IF;
        END LOOP;
    END IF;
    IF i <= n AND lower(parts[i]) = 'x' THEN
        i := i + 1;
        subtags := '{}';
        WHILE i <= n AND parts[i] ~ '^[A-Za-z0-9]{1,8}$' LOOP
            subtags := subtags || lower(parts[i]);
            i := i + 1;
        END LOOP;
        IF cardinality(subtags) = 0 THEN
            PERFORM enqueue_email_refuse('locale', 'is not a BCP 47 language tag: ''' || tag || '''');
        END IF;
        private_use := array_to_string(subtags, '-');
    END IF;
    IF i <= n OR (language = '' AND private_use IS NULL) THEN
        PERFORM enqueue_email_refuse('locale', 'is not a BCP 47 language tag: ''' || tag || '''');
    END IF;
    language := CASE language WHEN 'und' THEN '' WHEN 'iw' THEN 'he' WHEN 'ji' THEN 'yi' WHEN 'in' THEN 'id'
                ELSE language END;
    IF language = '' THEN
        PERFORM enqueue_email_refuse('locale', 'names no language: ''' || tag || '''');
    END IF;
    result := language || coalesce('-' || script, '') || coalesce('-' || region, '') || variants;
    FOR singleton IN SELECT k FROM jsonb_object_keys(extensions) k ORDER BY k COLLATE "C" LOOP
        subtags := ARRAY(SELECT jsonb_array_elements_text(extensions -> singleton));
        IF singleton = 'u' THEN
            -- Unicode locale extension: attributes sorted and unique, then keywords sorted by key, first wins
            unicode_attributes := '{}';
            unicode_keywords := '{}';
            keyword := NULL;
            FOR k IN 1..cardinality(subtags) LOOP
                IF length(subtags[k]) = 2 THEN
                    keyword := CASE WHEN unicode_keywords ? subtags[k] THEN '' ELSE subtags[k] END;
                    IF keyword <> '' THEN
                        unicode_keywords := unicode_keywords || jsonb_build_object(keyword, '');
                    END IF;
                ELSIF keyword IS NULL THEN
                    unicode_attributes := unicode_attributes || subtags[k];
                ELSIF keyword <> '' THEN
                    unicode_keywords := jsonb_set(unicode_keywords, ARRAY[keyword],
                        to_jsonb(concat_ws('-', nullif(unicode_keywords ->> keyword, ''), subtags[k])));
                END IF;
            END LOOP;
            subtags := ARRAY(SELECT DISTINCT a COLLATE "C" FROM unnest(unicode_attributes) a ORDER BY 1)
                       || ARRAY(SELECT concat_ws('-', k, nullif(v, '')) FROM jsonb_each_text(unicode_keywords) AS kw(k, v)
                                ORDER BY k COLLATE "C");
        END IF;
        result := result || '-' || singleton || '-' || array_to_string(subtags, '-');
    END LOOP;
    RETURN result || coalesce('-x-' || private_use, '');
END
$$;

-- EmailOutbox's Json.string: the JSON string Java writes, byte for byte.
CREATE FUNCTION enqueue_email_json_string(s text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
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
    LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = "${flyway:defaultSchema}", pg_temp AS $$
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
