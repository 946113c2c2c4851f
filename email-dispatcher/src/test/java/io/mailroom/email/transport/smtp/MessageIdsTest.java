package io.mailroom.email.transport.smtp;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class MessageIdsTest {

    @Test
    void derivationIsStableAcrossReleases() {
        // Literal on purpose: changing the derivation would give in-flight effects a new Message-ID.
        assertThat(MessageIds.forKey("email-order-102", "shop.example.com"))
                .isEqualTo("<email-order-102.6ab1e78d346f7a0b@shop.example.com>");
    }

    @Test
    void cleansTheReadablePartAndKeepsDistinctKeysDistinct() {
        assertThat(MessageIds.forKey("email/order.102", "example.com")).isEqualTo("<email_order_102.0b5e534634955835@example.com>");
        assertThat(MessageIds.forKey("email_order_102", "example.com")).isNotEqualTo(MessageIds.forKey("email/order.102", "example.com"));
    }

    @Test
    void longKeysAreCutButStillUnique() {
        String a = MessageIds.forKey("k".repeat(200) + "a", "example.com");
        String b = MessageIds.forKey("k".repeat(200) + "b", "example.com");
        assertThat(a).hasSize(1 + 64 + 1 + 16 + 1 + "example.com".length() + 1).isNotEqualTo(b);
    }
}
