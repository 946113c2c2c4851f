package io.mailroom.delivery.suppression;

/**
 * @param softBounceLimit soft bounces in a row (without a delivery between them) that suppress an address
 */
public record SuppressionConfig(int softBounceLimit) {

    public static final int DEFAULT_SOFT_BOUNCE_LIMIT = 3;
    public static final int MAX_SOFT_BOUNCE_LIMIT = 100;

    public SuppressionConfig {
        if (softBounceLimit < 1 || softBounceLimit > MAX_SOFT_BOUNCE_LIMIT) {
            throw new IllegalArgumentException("softBounceLimit (MAILROOM_SOFT_BOUNCE_LIMIT) must be 1.."
                    + MAX_SOFT_BOUNCE_LIMIT + ", was " + softBounceLimit);
        }
    }

    public static SuppressionConfig defaults() {
        return new SuppressionConfig(DEFAULT_SOFT_BOUNCE_LIMIT);
    }
}
