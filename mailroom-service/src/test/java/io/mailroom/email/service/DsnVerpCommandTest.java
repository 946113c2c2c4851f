package io.mailroom.email.service;

import io.mailroom.email.transport.smtp.Verp;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mailroom dsn ingest} with {@code MAILROOM_SMTP_VERP}: a report that returned neither the
 * message nor its headers still finds its email through the key in the address it was delivered to.
 */
class DsnVerpCommandTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String TEMPLATE = "bounces+{key}@shop.example";
    static final Verp VERP = Verp.parse(TEMPLATE);
    static final Instant T0 = Instant.parse("2026-12-04T10:00:00Z");

    /** A bounce as some relays write it: no returned message, no returned headers. */
    static String bounce(String ownId, String toHeader) {
        return "MIME-Version: 1.0\r\nMessage-ID: " + ownId + "\r\nTo: " + toHeader + "\r\n"
                + "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
                + "--b\r\nContent-Type: text/plain\r\n\r\nYour message could not be delivered.\r\n"
                + "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n"
                + "Final-Recipient: rfc822; gone@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n"
                + "Diagnostic-Code: smtp; 550 5.1.1 no such user\r\n\r\n--b--\r\n";
    }

    private static DsnCommandTest.Run run(Map<String, String> env, String stdin, String... args) {
        return DsnCommandTest.run(env, stdin, args);
    }

    private static void sentEmail(String key, long messageId) {
        pg.dsl().transaction(c -> {
            c.dsl().insertInto(OUTBOX_EFFECT)
                    .set(OUTBOX_EFFECT.IDEMPOTENCY_KEY, key)
                    .set(OUTBOX_EFFECT.TOPIC, "email.order_confirmation")
                    .set(OUTBOX_EFFECT.AGGREGATE_TYPE, "order")
                    .set(OUTBOX_EFFECT.AGGREGATE_ID, "102")
                    .set(OUTBOX_EFFECT.MESSAGE_ID, messageId)
                    .set(OUTBOX_EFFECT.MESSAGE_CREATED_AT, T0)
                    .set(OUTBOX_EFFECT.STATUS, "done")
                    .set(OUTBOX_EFFECT.MAX_ATTEMPTS, 10)
                    .execute();
            c.dsl().insertInto(IDEMPOTENCY_RECORD)
                    .set(IDEMPOTENCY_RECORD.EFFECT_KEY, key)
                    .set(IDEMPOTENCY_RECORD.FINGERPRINT, "0".repeat(64))
                    .set(IDEMPOTENCY_RECORD.STATE, "succeeded")
                    .set(IDEMPOTENCY_RECORD.FIRST_RESERVED_AT, T0)
                    .set(IDEMPOTENCY_RECORD.RESERVED_AT, T0)
                    .set(IDEMPOTENCY_RECORD.COMPLETED_AT, T0)
                    .set(IDEMPOTENCY_RECORD.RESULT_REF, "<" + key + ".0011223344556677@shop.example>")
                    .execute();
        });
    }

    private static String state(String key) {
        return pg.dsl().select(io.mailroom.db.jooq.Tables.DELIVERY_STATE.STATE).from(io.mailroom.db.jooq.Tables.DELIVERY_STATE)
                .where(io.mailroom.db.jooq.Tables.DELIVERY_STATE.IDEMPOTENCY_KEY.eq(key)).fetchOne(io.mailroom.db.jooq.Tables.DELIVERY_STATE.STATE);
    }

    @Test
    void theRecipientTheMailServerGivesCarriesTheKey() {
        String key = "email-order-102";
        sentEmail(key, 102);
        Map<String, String> env = Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials(), "MAILROOM_SMTP_VERP", TEMPLATE);

        DsnCommandTest.Run r = run(env, bounce("<dsn-verp-1@mx.example>", "bounces@shop.example"), "--recipient", VERP.addressFor(key), "-");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("<dsn-verp-1@mx.example> stored, 1 event(s), 1 matched, 0 orphan(s)");
        assertThat(pg.dsl().select(DELIVERY_EVENT.IDEMPOTENCY_KEY).from(DELIVERY_EVENT)
                .where(DELIVERY_EVENT.DELIVERY_ID.eq("<dsn-verp-1@mx.example>")).fetchOne(DELIVERY_EVENT.IDEMPOTENCY_KEY))
                .isEqualTo(key);
        assertThat(state(key)).isEqualTo("bounced");
    }

    @Test
    void withoutARecipientTheReportsToHeaderCarriesTheKey_andWithoutVerpItIsAnOrphan() {
        String key = "email:order/103?x=\"y\"&z";
        sentEmail(key, 103);
        String report = bounce("<dsn-verp-2@mx.example>", "Bounces <" + VERP.addressFor(key) + ">");

        DsnCommandTest.Run withoutVerp = run(Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials()),
                bounce("<dsn-verp-3@mx.example>", "<" + VERP.addressFor(key) + ">"), "-");
        assertThat(withoutVerp.code()).as(withoutVerp.err()).isZero();
        assertThat(withoutVerp.out()).contains("0 matched, 1 orphan(s)");
        assertThat(state(key)).isNull();

        DsnCommandTest.Run withVerp = run(Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials(), "MAILROOM_SMTP_VERP", TEMPLATE), report, "-");
        assertThat(withVerp.code()).as(withVerp.err()).isZero();
        assertThat(withVerp.out()).contains("1 matched, 0 orphan(s)");
        assertThat(state(key)).isEqualTo("bounced");
    }

    @Test
    void aBadVerpTemplateIs78NamingTheSetting() {
        DsnCommandTest.Run r = run(Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials(), "MAILROOM_SMTP_VERP", "bounces@shop.example"),
                bounce("<dsn-verp-4@mx.example>", "bounces@shop.example"), "-");

        assertThat(r.code()).isEqualTo(78);
        assertThat(r.err()).contains("MAILROOM_SMTP_VERP");
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT, DELIVERY_EVENT.DELIVERY_ID.eq("<dsn-verp-4@mx.example>"))).isZero();
    }
}
