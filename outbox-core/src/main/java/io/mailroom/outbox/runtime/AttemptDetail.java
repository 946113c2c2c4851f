package io.mailroom.outbox.runtime;

/**
 * The keys the dispatcher itself adds to an attempt's {@code detail} (beside the handler's own), so
 * the history can say why an attempt ended as it did by a code rather than by an error text.
 *
 * <ul>
 *   <li>{@value #RELEASE} on a {@code released} attempt: why the claim went back without counting,
 *       {@value #RELEASE_NOT_ATTEMPTED}, {@value #RELEASE_STOPPING} or {@value #RELEASE_ORPHANED}.</li>
 *   <li>{@value #PERMANENT} ({@code true}) on a {@code failed} attempt whose handler reported a
 *       permanent failure; absent when the message failed because its tries ran out.</li>
 * </ul>
 */
public final class AttemptDetail {

    public static final String RELEASE = "release";
    /** The handler did not try (breaker open, transport halted, bulkhead full, rate limit); the attempt's error says which. */
    public static final String RELEASE_NOT_ATTEMPTED = "not_attempted";
    /** The dispatcher was stopping and handed back a claim whose handler had not finished. */
    public static final String RELEASE_STOPPING = "stopping";
    /** The claim committed while the claimer's session was lost, so nobody handled it; returned by its own dispatcher. */
    public static final String RELEASE_ORPHANED = "orphaned";
    public static final String PERMANENT = "permanent";

    private AttemptDetail() {
    }

    /** The handler's detail with the release reason added. */
    static String released(String detailJson, String why) {
        return with(detailJson, RELEASE, "\"" + why + "\"");
    }

    /** The handler's detail marked as a permanent failure. */
    static String permanent(String detailJson) {
        return with(detailJson, PERMANENT, "true");
    }

    /**
     * Adds {@code "key": value} (a JSON literal made from this class's constants) to a JSON object
     * text, last, so that it wins over a key of the same name the handler chose. A detail that is
     * not an object is kept as it is.
     */
    static String with(String detailJson, String key, String jsonValue) {
        String field = "\"" + key + "\":" + jsonValue;
        if (detailJson == null || detailJson.isBlank()) {
            return "{" + field + "}";
        }
        String d = detailJson.strip();
        if (!d.startsWith("{") || !d.endsWith("}")) {
            return detailJson;
        }
        String inner = d.substring(1, d.length() - 1).strip();
        return "{" + inner + (inner.isEmpty() ? "" : ",") + field + "}";
    }
}
