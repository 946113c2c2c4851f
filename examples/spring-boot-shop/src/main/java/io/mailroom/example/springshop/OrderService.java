package io.mailroom.example.springshop;

import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.spring.MailroomEmails;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import java.math.BigDecimal;
import java.time.Clock;
import java.util.Map;

/**
 * Places orders. Each {@code @Transactional} method writes the order through JPA and enqueues its
 * confirmation through {@link MailroomEmails} in the one transaction: both commit, or neither does
 * and no email is ever sent.
 */
@Service
public class OrderService {

    /** The shop's own template, in this example's template folder (src/main/templates). */
    public static final String CONFIRMATION_TEMPLATE = "shop_order_confirmed";

    private final ShopOrderRepository orders;
    private final MailroomEmails emails;
    private final Clock clock;

    public OrderService(ShopOrderRepository orders, MailroomEmails emails, Clock clock) {
        this.orders = orders;
        this.emails = emails;
        this.clock = clock;
    }

    /** Confirmation's business-effect key: one email per order, whatever retries happen. */
    public static String confirmationKey(long orderId) {
        return "shop-order-" + orderId + "-confirmed";
    }

    @Transactional
    public ShopOrder place(NewOrder order) {
        ShopOrder saved = orders.saveAndFlush(new ShopOrder(order.email(), order.name(), order.item(), order.quantity(),
                order.totalCents(), clock.instant()));
        emails.enqueue(confirmation(saved));
        return saved;
    }

    /** Places the order and enqueues its email, then the payment fails: everything is rolled back. */
    @Transactional
    public ShopOrder placeAndDeclinePayment(NewOrder order) {
        ShopOrder saved = place(order);
        throw new PaymentDeclinedException("payment for order " + saved.getId() + " was declined");
    }

    private static OutgoingEmail confirmation(ShopOrder order) {
        return OutgoingEmail.template(CONFIRMATION_TEMPLATE)
                .to(order.getCustomerEmail(), order.getCustomerName())
                .about("shop_order", String.valueOf(order.getId()))
                .idempotencyKey(confirmationKey(order.getId()))
                .data(Map.of("order", Map.of(
                        "id", String.valueOf(order.getId()),
                        "item", order.getItem(),
                        "quantity", order.getQuantity(),
                        "total", BigDecimal.valueOf(order.getTotalCents(), 2)),
                        "customer", Map.of("name", order.getCustomerName())))
                .build();
    }
}
