package io.mailroom.email;

import java.util.Map;

/** Fixture factory for emails in transport tests. */
public final class TestEmails {

    public static final EmailAddress SHOP = EmailAddress.of("shop@example.com", "Example Shop");

    private TestEmails() {
    }

    public static Email to(String address) {
        return new Email(SHOP, EmailAddress.of(address, "Ann"), "Your order #102 is confirmed",
                "Hello Ann,\nthank you.\n", "<p>Hello Ann,</p><p>thank you.</p>",
                Map.of("Auto-Submitted", "auto-generated"), "test/v1");
    }

    public static Email sample() {
        return to("ann@example.com");
    }
}
