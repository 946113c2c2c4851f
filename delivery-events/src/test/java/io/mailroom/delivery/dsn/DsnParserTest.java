package io.mailroom.delivery.dsn;

import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryKind;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DsnParserTest {

    /** Stands in for the VERP decoding of the SMTP transport: the part after "bounces+". */
    private final DsnParser verpParser = new DsnParser(address ->
            address.startsWith("bounces+") && address.endsWith("@shop.example")
                    ? "key:" + address.substring("bounces+".length(), address.indexOf('@')) : null);

    @Test
    void postfixHardBounceUserUnknown() throws Exception {
        ParsedDsn dsn = verpParser.parse(fixture("postfix-hard-5.1.1.eml"), null);

        assertThat(dsn.deliveryId()).isEqualTo("<20261204100213.4QhL2X0abcz9sWx@mail.shop.example>");
        assertThat(dsn.events()).hasSize(1);
        DeliveryEvent e = dsn.events().getFirst();
        assertThat(e.kind()).isEqualTo(DeliveryKind.BOUNCED);
        assertThat(e.bounceType()).isEqualTo(BounceType.HARD);
        assertThat(e.providerEvent()).isEqualTo("dsn.failed");
        assertThat(e.recipient()).isEqualTo("nobody@customer.example");
        assertThat(e.providerMessageId()).isEqualTo("<order-102-confirmation.1b2c3d4e5f607182@shop.example>");
        assertThat(e.idempotencyKey()).isEqualTo("key:n5zgizlsfuytamrnmnxw4ztjojwwc5djn5xa");
        assertThat(e.diagnosticCode()).isEqualTo("smtp; 550 5.1.1 <nobody@customer.example>: Recipient address "
                + "rejected: User unknown in virtual mailbox table");
        assertThat(e.description()).isEqualTo("Action: failed, Status: 5.1.1");
        // No Last-Attempt-Date: the per-message Arrival-Date stands in.
        assertThat(e.occurredAt()).isEqualTo(Instant.parse("2026-12-04T10:02:12Z"));
    }

    @Test
    void postfixDelayWithReturnedHeadersOnly() throws Exception {
        ParsedDsn dsn = verpParser.parse(fixture("postfix-delayed-headers.eml"), null);

        assertThat(dsn.deliveryId()).isEqualTo("<20261204140213.4QhM9T2xyzq1rTy@mail.shop.example>");
        DeliveryEvent e = dsn.events().getFirst();
        assertThat(dsn.events()).hasSize(1);
        assertThat(e.kind()).isEqualTo(DeliveryKind.DEFERRED);
        assertThat(e.bounceType()).isNull();
        assertThat(e.providerEvent()).isEqualTo("dsn.delayed");
        assertThat(e.recipient()).isEqualTo("slow@customer.example");
        assertThat(e.providerMessageId()).isEqualTo("<order-103-confirmation.99aabbccddeeff00@shop.example>");
        // Delivered to the plain bounce address: no key, matching falls to the Message-ID.
        assertThat(e.idempotencyKey()).isNull();
        assertThat(e.diagnosticCode()).isEqualTo("X-Postfix; connect to mx.customer.example[203.0.113.9]:25: Connection timed out");
        assertThat(e.description()).isEqualTo("Action: delayed, Status: 4.4.1");
    }

    @Test
    void eximReportWithSeveralRecipientsGivesOneEventEach() throws Exception {
        ParsedDsn dsn = verpParser.parse(fixture("exim-several-recipients.eml"), null);

        assertThat(dsn.deliveryId()).isEqualTo("<E1vRa2b-000Hx1-0T@mx.shop.example>");
        assertThat(dsn.events()).extracting(DeliveryEvent::recipient)
                .containsExactly("full@customer.example", "gone@other.example", "ok@other.example");
        assertThat(dsn.events()).extracting(DeliveryEvent::providerMessageId)
                .containsOnly("<order-104-confirmation.0011223344556677@shop.example>");

        DeliveryEvent full = dsn.events().get(0);
        assertThat(full.kind()).isEqualTo(DeliveryKind.BOUNCED);
        assertThat(full.bounceType()).isEqualTo(BounceType.SOFT);
        assertThat(full.diagnosticCode()).isEqualTo("smtp; 452 4.2.2 Mailbox full");
        assertThat(full.occurredAt()).isEqualTo(Instant.parse("2026-12-04T10:03:20Z"));

        DeliveryEvent gone = dsn.events().get(1);
        assertThat(gone.kind()).isEqualTo(DeliveryKind.BOUNCED);
        assertThat(gone.bounceType()).isEqualTo(BounceType.HARD);
        assertThat(gone.diagnosticCode()).isEqualTo("smtp; 550 5.1.1 No such user");
        assertThat(gone.occurredAt()).isNull();

        DeliveryEvent ok = dsn.events().get(2);
        assertThat(ok.kind()).isEqualTo(DeliveryKind.DELIVERED);
        assertThat(ok.bounceType()).isNull();
        assertThat(ok.providerEvent()).isEqualTo("dsn.relayed");
        assertThat(ok.diagnosticCode()).isNull();
    }

    @Test
    void eightBitUtf8DiagnosticAndRfc822HeadersWithoutOwnMessageId() throws Exception {
        byte[] raw = fixture("exim-utf8-diagnostic.eml");
        ParsedDsn dsn = verpParser.parse(raw, "bounces+abc@shop.example");

        assertThat(dsn.deliveryId()).isEqualTo("sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(raw)));
        DeliveryEvent e = dsn.events().getFirst();
        assertThat(e.recipient()).isEqualTo("jürgen@müller.example");
        assertThat(e.diagnosticCode()).isEqualTo("smtp; 550 5.2.1 Postfach gesperrt – Empfänger unbekannt");
        assertThat(e.bounceType()).isEqualTo(BounceType.HARD);
        assertThat(e.providerMessageId()).isEqualTo("<order-105-confirmation.8899aabbccddeeff@shop.example>");
        // The address given by the mail server wins over the headers.
        assertThat(e.idempotencyKey()).isEqualTo("key:abc");
    }

    @Test
    void aPlainMessageIsMalformedNamingWhatIsMissing() {
        byte[] plain = "From: a@b.example\nTo: c@d.example\nSubject: hi\nContent-Type: text/plain\n\nhello\n"
                .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> verpParser.parse(plain, null))
                .isInstanceOf(MalformedDsnException.class)
                .hasMessageContaining("Content-Type is text/plain")
                .hasMessageContaining("multipart/report; report-type=delivery-status");
    }

    @Test
    void aReportOfAnotherTypeOrWithoutStatusPartIsMalformed() {
        String feedback = """
                Content-Type: multipart/report; report-type=feedback-report; boundary=b

                --b
                Content-Type: text/plain

                spam
                --b--
                """;
        assertThatThrownBy(() -> verpParser.parse(feedback.getBytes(StandardCharsets.UTF_8), null))
                .isInstanceOf(MalformedDsnException.class).hasMessageContaining("report-type 'feedback-report'");

        String noStatus = """
                Content-Type: multipart/report; report-type=delivery-status; boundary=b

                --b
                Content-Type: text/plain

                it bounced
                --b--
                """;
        assertThatThrownBy(() -> verpParser.parse(noStatus.getBytes(StandardCharsets.UTF_8), null))
                .isInstanceOf(MalformedDsnException.class).hasMessageContaining("no message/delivery-status part");

        String noAction = """
                Content-Type: multipart/report; report-type=delivery-status; boundary=b

                --b
                Content-Type: message/delivery-status

                Reporting-MTA: dns; mx.shop.example

                Final-Recipient: rfc822; a@customer.example
                Status: 5.1.1

                --b--
                """;
        assertThatThrownBy(() -> verpParser.parse(noAction.getBytes(StandardCharsets.UTF_8), null))
                .isInstanceOf(MalformedDsnException.class)
                .hasMessage("per-recipient block 1 (a@customer.example) has no Action");

        assertThatThrownBy(() -> verpParser.parse(new byte[0], null))
                .isInstanceOf(MalformedDsnException.class).hasMessage("the DSN is empty");
    }

    private static byte[] fixture(String name) throws IOException {
        try (InputStream in = DsnParserTest.class.getResourceAsStream("/dsn/" + name)) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes();
        }
    }
}
