package io.mailroom.orders;

import java.math.BigDecimal;
import java.time.Instant;

/**
 * What {@link OrderService#placeOrder} wrote: the order and the outbox message of its confirmation.
 *
 * @param orderId          the new order's id
 * @param idempotencyKey   the confirmation's business-effect key, {@code email-order-{orderId}}
 * @param outboxMessageId  id of the outbox row that will send the confirmation
 * @param total            the computed total
 * @param createdAt        the order's creation time (database time)
 */
public record PlacedOrder(long orderId, String idempotencyKey, long outboxMessageId, BigDecimal total,
                          Instant createdAt) {
}
