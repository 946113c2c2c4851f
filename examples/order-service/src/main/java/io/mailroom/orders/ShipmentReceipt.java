package io.mailroom.orders;

import java.time.Instant;

/**
 * The shipment of an order as recorded, and whether this request recorded it or repeated the
 * request that did ({@link #replayed()}: nothing written, no second email).
 *
 * @param idempotencyKey the shipping notice's business-effect key, {@code email-order-{id}-shipped}
 */
public record ShipmentReceipt(long orderId, String carrier, String trackingNumber, String trackingUrl, Instant shippedAt,
                              String idempotencyKey, boolean replayed) {
}
