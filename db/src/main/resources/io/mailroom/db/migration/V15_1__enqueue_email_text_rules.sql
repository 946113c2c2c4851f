-- The text rules behind enqueue_email (V14): MailboxRules' address and display-name rules with
-- RFC 2047 encoded words decoded as EncodedWords does, and BCP 47 language tags as
-- java.util.Locale reads and writes them. Each function says which Java method it mirrors;
-- EnqueueEmailConformanceTest holds them to it. They are called only by enqueue_email (PL/pgSQL
-- binds names when it runs, so V14 may be created first).

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
        -- Java drops 'und' as a primary language only; an extlang, even 'und', replaces it
        language := CASE lower(parts[1]) WHEN 'und' THEN '' ELSE lower(parts[1]) END;
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
    language := CASE language WHEN 'iw' THEN 'he' WHEN 'ji' THEN 'yi' WHEN 'in' THEN 'id' ELSE language END;
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
