package io.mailroom.delivery;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The delivery events' one JSON mapper, configured here once (a configured mapper is thread-safe)
 * for its strictest user, the webhook adapters reading a provider's body from the internet: a
 * duplicate key or text after the object is refused, and nesting stops at 32 levels. The store and
 * the suppression list build and write small objects with it, which those settings do not change.
 */
public final class DeliveryJson {

    private static final JsonMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(32).build())
                    .build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private DeliveryJson() {
    }

    /** The configured mapper; do not reconfigure it, everyone shares it. */
    public static JsonMapper mapper() {
        return MAPPER;
    }
}
