package io.mailroom.delivery.dsn;

import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.delivery.webhook.MalformedEventException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Real multipart/report bounces, as Postfix and Exim write them, parsed field by field. */
class DsnParserTest {

    static byte[] fixture(String name) throws IOException {
        try (InputStream in = DsnParserTest.class.getResourceAsStream("/dsn/" + name)) {
            return in.readAllBytes();
        }
    }

    @Test
    void aPostfixHardBounce_withTheReturnedMessage() throws Exception {
        DsnParser.Dsn dsn = DsnParser.parse(fixture("postfix-hard-bounce.eml"));

        assertThat(dsn.deliveryId()).isEqualTo("<20261204100207.4QxYz12abc@mx1.shop.example>");
        assertThat(dsn.originalMessageId()).isEqualTo("<email-order-102.1f2e3d4c5b6a7980@shop.example>");
        assertThat(dsn.reportingMta()).isEqualTo("dns; mx1.shop.example");
        assertThat(dsn.events()).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo(DeliveryKind.BOUNCED);
            assertThat(e.bounceType()).isEqualTo(BounceType.HARD);
            assertThat(e.recipient()).isEqualTo("ann@example.com");
            assertThat(e.providerMessageId()).isEqualTo("<email-order-102.1f2e3d4c5b6a7980@shop.example>");
            assertThat(e.diagnosticCode()).startsWith("smtp; 550 5.1.1 <ann@example.com>: Recipient address rejected:")
                    .endsWith("User unknown in virtual mailbox table");
            assertThat(e.providerEvent()).isEqualTo("dsn failed 5.1.1");
            assertThat(e.occurredAt()).isEqualTo(Instant.parse("2026-12-04T10:02:07Z"));
        });
    }

    @Test
    void anEximReport_withSeveralRecipients_aUtf8Diagnostic_andOnlyTheReturnedHeaders() throws Exception {
        DsnParser.Dsn dsn = DsnParser.parse(fixture("exim-soft-delayed-delivered.eml"));

        assertThat(dsn.originalMessageId()).isEqualTo("<email-order-205.0a0b0c0d0e0f1011@shop.example>");
        assertThat(dsn.events()).extracting(DeliveryEvent::kind, DeliveryEvent::bounceType, DeliveryEvent::recipient)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(DeliveryKind.BOUNCED, BounceType.SOFT, "bo@example.org"),
                        org.assertj.core.groups.Tuple.tuple(DeliveryKind.DEFERRED, null, "cy@example.org"),
                        org.assertj.core.groups.Tuple.tuple(DeliveryKind.DELIVERED, null, "di@example.org"));
        assertThat(dsn.events().getFirst().diagnosticCode()).isEqualTo("smtp; 452 4.2.2 Hộp thư đã đầy (mailbox full)");
        assertThat(dsn.events()).allSatisfy(e ->
                assertThat(e.providerMessageId()).isEqualTo("<email-order-205.0a0b0c0d0e0f1011@shop.example>"));
    }

    @Test
    void whatIsNotADeliveryStatusReportIsRefusedNamingWhatIsMissing() throws Exception {
        assertThatThrownBy(() -> DsnParser.parse(fixture("not-a-report.eml")))
                .isInstanceOf(MalformedEventException.class)
                .hasMessageContaining("text/plain, not multipart/report");
        assertThatThrownBy(() -> DsnParser.parse(new byte[0])).hasMessage("body: is empty");
        byte[] noStatus = ("MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
                + "--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n").getBytes();
        assertThatThrownBy(() -> DsnParser.parse(noStatus)).hasMessageContaining("no delivery-status part");
    }

    @Test
    void aReportWithoutItsOwnMessageIdIsKeyedByItsBytes() throws Exception {
        String raw = new String(fixture("postfix-hard-bounce.eml"), java.nio.charset.StandardCharsets.UTF_8)
                .replace("Message-Id: <20261204100207.4QxYz12abc@mx1.shop.example>\r\n", "");
        DsnParser.Dsn a = DsnParser.parse(raw.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        DsnParser.Dsn b = DsnParser.parse(raw.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(a.deliveryId()).startsWith("sha256:").hasSize(7 + 64).isEqualTo(b.deliveryId());
    }

    /** A report with {@code recipients} per-recipient blocks, extra header lines {@code head}, and a Message-ID. */
    static byte[] report(String messageId, int recipients, String diagnostic, String lastAttempt) {
        StringBuilder s = new StringBuilder("MIME-Version: 1.0\r\nMessage-ID: " + messageId + "\r\n"
                + "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
                + "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n");
        for (int i = 0; i < recipients; i++) {
            s.append("\r\nFinal-Recipient: rfc822; r").append(i).append("@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n");
            if (diagnostic != null) {
                s.append("Diagnostic-Code: ").append(diagnostic).append("\r\n");
            }
            if (lastAttempt != null) {
                s.append("Last-Attempt-Date: ").append(lastAttempt).append("\r\n");
            }
        }
        s.append("\r\n--b--\r\n");
        return s.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void aReportOverTheEventCapIsRefused_andAnOverlongMessageIdIsKeyedByItsHash() throws Exception {
        int cap = io.mailroom.delivery.webhook.DeliveryEventAdapter.MAX_EVENTS;
        assertThat(DsnParser.parse(report("<r@mx>", cap, null, null)).events()).hasSize(cap);
        assertThatThrownBy(() -> DsnParser.parse(report("<r@mx>", cap + 1, null, null)))
                .isInstanceOf(MalformedEventException.class).hasMessageContaining("at most " + cap);

        String longId = "<" + "x".repeat(io.mailroom.delivery.DeliveryEventStore.MAX_DELIVERY_ID) + "@mx>";
        DsnParser.Dsn a = DsnParser.parse(report(longId, 1, null, null));
        assertThat(a.deliveryId()).startsWith("sha256:").hasSize(7 + 64)
                .isEqualTo(DsnParser.parse(report(longId, 1, "smtp; 550 other bytes", null)).deliveryId());
    }
}
