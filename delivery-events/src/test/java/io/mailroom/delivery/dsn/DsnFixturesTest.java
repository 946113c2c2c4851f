package io.mailroom.delivery.dsn;

import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.delivery.webhook.MalformedEventException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;
import java.util.function.Function;

import static io.mailroom.delivery.dsn.DsnParserTest.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * More real bounces (Postfix's delay warning with only the returned headers, an Exim report with
 * a relayed recipient, an 8-bit UTF-8 diagnostic to a UTF-8 address) and the VERP key taken from
 * the address the report was delivered to.
 */
class DsnFixturesTest {

    /** Stands in for the SMTP transport's VERP decoder: what follows "bounces+", marked. */
    static final Function<String, String> VERP = address ->
            address.startsWith("bounces+") && address.endsWith("@shop.example")
                    ? "key:" + address.substring("bounces+".length(), address.indexOf('@')) : null;

    @Test
    void postfixHardBounce_keyFromTheVerpDeliveredToHeader() throws Exception {
        DsnParser.Dsn dsn = DsnParser.parse(fixture("postfix-hard-5.1.1.eml"), VERP, null);

        assertThat(dsn.deliveryId()).isEqualTo("<20261204100213.4QhL2X0abcz9sWx@mail.shop.example>");
        DeliveryEvent e = dsn.events().getFirst();
        assertThat(dsn.events()).hasSize(1);
        assertThat(e.kind()).isEqualTo(DeliveryKind.BOUNCED);
        assertThat(e.bounceType()).isEqualTo(BounceType.HARD);
        assertThat(e.recipient()).isEqualTo("nobody@customer.example");
        assertThat(e.providerMessageId()).isEqualTo("<order-102-confirmation.1b2c3d4e5f607182@shop.example>");
        assertThat(e.idempotencyKey()).isEqualTo("key:n5zgizlsfuytamrnmnxw4ztjojwwc5djn5xa");
        assertThat(e.diagnosticCode()).matches("smtp; 550 5\\.1\\.1 <nobody@customer\\.example>: Recipient address\\s+"
                + "rejected: User unknown in virtual mailbox table");

        // Without VERP the same report carries no key; matching falls to the Message-ID.
        assertThat(DsnParser.parse(fixture("postfix-hard-5.1.1.eml")).events().getFirst().idempotencyKey()).isNull();
    }

    @Test
    void postfixDelayWarning_withOnlyTheReturnedHeaders() throws Exception {
        DsnParser.Dsn dsn = DsnParser.parse(fixture("postfix-delayed-headers.eml"), VERP, null);

        assertThat(dsn.deliveryId()).isEqualTo("<20261204140213.4QhM9T2xyzq1rTy@mail.shop.example>");
        assertThat(dsn.events()).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo(DeliveryKind.DEFERRED);
            assertThat(e.bounceType()).isNull();
            assertThat(e.recipient()).isEqualTo("slow@customer.example");
            assertThat(e.providerMessageId()).isEqualTo("<order-103-confirmation.99aabbccddeeff00@shop.example>");
            assertThat(e.idempotencyKey()).as("delivered to the plain bounce address").isNull();
            assertThat(e.diagnosticCode()).matches("X-Postfix; connect to mx\\.customer\\.example\\[203\\.0\\.113\\.9]:25:\\s+Connection timed out");
            assertThat(e.providerEvent()).isEqualTo("dsn delayed 4.4.1");
        });
    }

    @Test
    void eximReport_softHardAndRelayedRecipients() throws Exception {
        DsnParser.Dsn dsn = DsnParser.parse(fixture("exim-several-recipients.eml"), VERP, null);

        assertThat(dsn.deliveryId()).isEqualTo("<E1vRa2b-000Hx1-0T@mx.shop.example>");
        assertThat(dsn.events()).extracting(DeliveryEvent::recipient, DeliveryEvent::kind, DeliveryEvent::bounceType,
                        DeliveryEvent::diagnosticCode)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("full@customer.example", DeliveryKind.BOUNCED, BounceType.SOFT, "smtp; 452 4.2.2 Mailbox full"),
                        org.assertj.core.groups.Tuple.tuple("gone@other.example", DeliveryKind.BOUNCED, BounceType.HARD, "smtp; 550 5.1.1 No such user"),
                        org.assertj.core.groups.Tuple.tuple("ok@other.example", DeliveryKind.DELIVERED, null, null));
        assertThat(dsn.events()).extracting(DeliveryEvent::providerMessageId)
                .containsOnly("<order-104-confirmation.0011223344556677@shop.example>");
        assertThat(dsn.events().getFirst().occurredAt()).isEqualTo(Instant.parse("2026-12-04T10:03:20Z"));
        assertThat(dsn.events()).extracting(DeliveryEvent::idempotencyKey).containsOnlyNulls();
    }

    @Test
    void eightBitDiagnostic_utf8Address_noOwnMessageId_keyFromTheAddressTheMailServerGave() throws Exception {
        byte[] raw = fixture("exim-utf8-diagnostic.eml");
        DsnParser.Dsn dsn = DsnParser.parse(raw, VERP, "bounces+abc@shop.example");

        assertThat(dsn.deliveryId()).isEqualTo("sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(raw)));
        assertThat(dsn.events()).singleElement().satisfies(e -> {
            assertThat(e.recipient()).isEqualTo("jürgen@müller.example");
            assertThat(e.diagnosticCode()).isEqualTo("smtp; 550 5.2.1 Postfach gesperrt – Empfänger unbekannt");
            assertThat(e.bounceType()).isEqualTo(BounceType.HARD);
            assertThat(e.providerMessageId()).isEqualTo("<order-105-confirmation.8899aabbccddeeff@shop.example>");
            assertThat(e.idempotencyKey()).isEqualTo("key:abc");
        });
    }

    @Test
    void aReportWithoutAnActionIsRefusedNamingTheBlock() {
        String noAction = """
                Content-Type: multipart/report; report-type=delivery-status; boundary=b

                --b
                Content-Type: message/delivery-status

                Reporting-MTA: dns; mx.shop.example

                Final-Recipient: rfc822; a@customer.example
                Status: 5.1.1

                --b--
                """;
        assertThatThrownBy(() -> DsnParser.parse(noAction.getBytes(StandardCharsets.UTF_8), VERP, null))
                .isInstanceOf(MalformedEventException.class).hasMessageContaining("recipient block 1 Action");
    }
}
