package io.mailroom.example.springshop;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/** One order of the shop: a single item, bought by one customer. Its table is the shop's, migrated by the shop. */
@Entity
@Table(name = "orders")
public class ShopOrder {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    @Column(name = "customer_email", nullable = false)
    private String customerEmail;

    @Column(name = "customer_name", nullable = false)
    private String customerName;

    @Column(nullable = false)
    private String item;

    @Column(nullable = false)
    private int quantity;

    @Column(name = "total_cents", nullable = false)
    private long totalCents;

    @Column(name = "placed_at", nullable = false)
    private Instant placedAt;

    protected ShopOrder() {
    }

    public ShopOrder(String customerEmail, String customerName, String item, int quantity, long totalCents,
                     Instant placedAt) {
        this.customerEmail = customerEmail;
        this.customerName = customerName;
        this.item = item;
        this.quantity = quantity;
        this.totalCents = totalCents;
        this.placedAt = placedAt;
    }

    public Long getId() {
        return id;
    }

    public String getCustomerEmail() {
        return customerEmail;
    }

    public String getCustomerName() {
        return customerName;
    }

    public String getItem() {
        return item;
    }

    public int getQuantity() {
        return quantity;
    }

    public long getTotalCents() {
        return totalCents;
    }

    public Instant getPlacedAt() {
        return placedAt;
    }
}
