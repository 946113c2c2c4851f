package io.mailroom.orders;

/**
 * What a request to place an order led to: the order it is about, and whether it was placed now
 * or earlier, by a request with the same {@code Idempotency-Key} ({@link #replayed()}).
 *
 * @param orderId  the order's id
 * @param replayed true if this request created nothing and answers with an earlier request's order
 */
public record OrderReceipt(long orderId, boolean replayed) {

    /** The confirmation email's business-effect key, {@code email-order-{orderId}}. */
    public String confirmationKey() {
        return OrderService.idempotencyKey(orderId);
    }
}
