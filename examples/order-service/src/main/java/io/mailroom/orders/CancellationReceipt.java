package io.mailroom.orders;

import java.time.Instant;

/**
 * The cancellation of an order as recorded, and whether this request recorded it or repeated the
 * request that did ({@link #replayed()}: nothing written, no second email).
 *
 * @param idempotencyKey the cancellation email's business-effect key, {@code email-order-{id}-cancelled}
 */
public record CancellationReceipt(long orderId, String reason, Instant cancelledAt, String idempotencyKey,
                                  boolean replayed) {
}
