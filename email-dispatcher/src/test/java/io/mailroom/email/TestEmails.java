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

    /** To Ann and Bo, Cc Carl, Bcc Dora, tagged category=invoice and plan=pro. */
    public static Email several() {
        Email one = sample();
        return one.withRecipients(java.util.List.of(one.to(), EmailAddress.of("bo@example.com")),
                java.util.List.of(EmailAddress.of("carl@corp.example", "Carl")), java.util.List.of(EmailAddress.of("dora@audit.example")),
                new java.util.LinkedHashMap<>(Map.of("category", "invoice")) {{ put("plan", "pro"); }});
    }
}
