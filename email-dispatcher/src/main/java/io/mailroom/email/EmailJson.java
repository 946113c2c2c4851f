package io.mailroom.email;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The email library's one JSON mapper, configured here once (a configured mapper is thread-safe) for
 * its strictest user, the composer: decimals stay exact and maps are written with their entries in
 * key order (the fingerprint's canonical form), and a payload is read with {@link #strict()}, which
 * refuses a duplicate key or text after the object. Everyone else builds and writes JSON nodes with
 * it, which those settings do not change, or reads with it what it only looks into (a provider's
 * answer for its message id, a failed email's payload for the address in a log line), where the
 * last of duplicate keys wins and trailing text is ignored, as Jackson does by default.
 */
public final class EmailJson {

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .build();

    /** On the reader, not the mapper: a parser's duplicate check can be switched on per read, not off. */
    private static final ObjectReader STRICT = MAPPER.reader()
            .with(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private EmailJson() {
    }

    /** The configured mapper; do not reconfigure it, everyone shares it. */
    public static JsonMapper mapper() {
        return MAPPER;
    }

    /** The mapper's reader that refuses a duplicate key and anything after the value. */
    public static ObjectReader strict() {
        return STRICT;
    }
}
