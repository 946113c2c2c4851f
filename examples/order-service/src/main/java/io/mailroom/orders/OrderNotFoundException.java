package io.mailroom.orders;

/** The order a request names does not exist (HTTP 404, field {@code id}). Nothing has been written. */
public final class OrderNotFoundException extends RuntimeException {

    OrderNotFoundException(long orderId) {
        super("order " + orderId + " does not exist");
    }

    public String field() {
        return "id";
    }
}
