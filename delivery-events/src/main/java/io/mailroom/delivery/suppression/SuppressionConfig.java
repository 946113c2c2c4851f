package io.mailroom.delivery.suppression;

import java.util.Objects;

/**
 * @param softBounceLimit soft bounces in a row (without a delivery between them) that suppress an address
 * @param erasureKey      the key an erased address's suppression is kept under ({@link ErasureKey})
 */
public record SuppressionConfig(int softBounceLimit, ErasureKey erasureKey) {

    public static final int DEFAULT_SOFT_BOUNCE_LIMIT = 3;
    public static final int MAX_SOFT_BOUNCE_LIMIT = 100;

    public SuppressionConfig {
        if (softBounceLimit < 1 || softBounceLimit > MAX_SOFT_BOUNCE_LIMIT) {
            throw new IllegalArgumentException("softBounceLimit (MAILROOM_SOFT_BOUNCE_LIMIT) must be 1.."
                    + MAX_SOFT_BOUNCE_LIMIT + ", was " + softBounceLimit);
        }
        Objects.requireNonNull(erasureKey, "erasureKey");
    }

    /** With the erasure key stored in the database. */
    public SuppressionConfig(int softBounceLimit) {
        this(softBounceLimit, ErasureKey.stored());
    }

    public static SuppressionConfig defaults() {
        return new SuppressionConfig(DEFAULT_SOFT_BOUNCE_LIMIT);
    }
}
