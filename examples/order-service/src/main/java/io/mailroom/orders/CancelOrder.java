package io.mailroom.orders;

/**
 * A request to cancel an order that has not shipped ({@code POST /orders/{id}/cancellation}).
 *
 * @param reason optional: why, shown to the customer; 1 to {@value #MAX_REASON_LENGTH} characters on one line
 */
public record CancelOrder(String reason) {

    public static final int MAX_REASON_LENGTH = 500;

    /** @throws InvalidOrderException naming the offending field */
    public void validate() {
        if (reason != null) {
            PlaceOrder.requireText("reason", reason, MAX_REASON_LENGTH);
        }
    }
}
