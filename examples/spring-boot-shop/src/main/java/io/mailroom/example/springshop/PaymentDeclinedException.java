package io.mailroom.example.springshop;

/** The payment for an order was refused: the order, and its confirmation email with it, are rolled back. */
public class PaymentDeclinedException extends RuntimeException {

    public PaymentDeclinedException(String message) {
        super(message);
    }
}
