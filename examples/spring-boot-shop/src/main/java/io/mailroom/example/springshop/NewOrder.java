package io.mailroom.example.springshop;

/** What a customer orders, as the shop's API takes it. */
public record NewOrder(String email, String name, String item, int quantity, long totalCents) {
}
