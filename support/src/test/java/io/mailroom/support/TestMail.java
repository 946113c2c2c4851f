package io.mailroom.support;

import io.mailroom.idempotency.Fingerprint;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.idempotency.Reservation;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.Outcome;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.function.Function;

/**
 * Test emails made the way the real system makes them: enqueued with {@link OutboxEnqueuer} and
 * finished by a real {@link Dispatcher#runOnce()} whose handler plays the mail transport: it
 * reserves the key in the idempotency store (with a descriptor naming recipient and subject),
 * then reports the outcome the test asks for, recording it in the store in the same transaction
 * as the dispatcher does.
 */
final class TestMail {

    static final String CONFIRMATION = "email.order_confirmation";
    static final String SHIPPED = "email.order_shipped";

    /** What the fake provider does with an email. */
    enum Result {
        /** Accepted: done, with the provider's id and HTTP status in the attempt detail. */
        SENT,
        /** Refused for good (SMTP 550). */
        FAILED,
        /** Transient failure: back to pending after a backoff. */
        RETRY,
        /** No answer after the data was sent: parked for review, idempotency record ambiguous. */
        REVIEW,
        /** Accepted, by a transport that keeps no idempotency record (recipient then comes from the payload). */
        SENT_WITHOUT_RECORD,
        /** Not tried: the transport's circuit breaker is open; handed back at once, attempt not counted. */
        NOT_ATTEMPTED,
        /**
         * Not sent: the recipient is on the suppression list. Failed with the suppression's reason and
         * no idempotency record, as the email handler ends it (the check comes before the reservation).
         */
        SUPPRESSED
    }

    /** The reason a {@link Result#NOT_ATTEMPTED} attempt gives, as the resilient transport words it. */
    static final String BREAKER_OPEN = "circuit breaker of transport smtp is OPEN";

    private TestMail() {
    }

    static String payload(long orderId, String email, String name) {
        return "{\"orderId\":" + orderId + ",\"customerEmail\":\"" + email + "\",\"customerName\":\"" + name
                + "\",\"currency\":\"EUR\",\"total\":\"25.00\",\"lines\":[]}";
    }

    /** The payload {@code EmailOutbox} writes (email-api's envelope): the recipient is {@code to.address}. */
    static String envelope(String template, String email, String name) {
        return "{\"v\":1,\"template\":\"" + template + "\",\"locale\":\"en\",\"to\":{\"address\":\"" + email
                + "\",\"name\":\"" + name + "\"},\"headers\":{},\"data\":{}}";
    }

    /** The order confirmation of order {@code orderId}: key {@code email-order-N}. */
    static EnqueuedMessage confirmation(DSLContext dsl, long orderId) {
        return enqueue(dsl, NewMessage.of(CONFIRMATION, "order", Long.toString(orderId), "email-order-" + orderId,
                payload(orderId, "ann" + orderId + "@example.com", "Ann Lee")));
    }

    /** A second email of the same order: key {@code email-order-N-shipped}. */
    static EnqueuedMessage shipped(DSLContext dsl, long orderId) {
        return enqueue(dsl, NewMessage.of(SHIPPED, "order", Long.toString(orderId), "email-order-" + orderId + "-shipped",
                payload(orderId, "ann" + orderId + "@example.com", "Ann Lee")));
    }

    static EnqueuedMessage enqueue(DSLContext dsl, NewMessage message) {
        OutboxEnqueuer enqueuer = new OutboxEnqueuer(null, false);
        return dsl.transactionResult(cfg -> enqueuer.enqueue(cfg.dsl(), message));
    }

    /** One dispatcher pass; every due email gets {@code script}'s result for its key. Returns how many were handled. */
    static int dispatch(DataSource dataSource, Function<String, Result> script) {
        MessageHandler handler = handler(dataSource, script);
        DispatcherConfig config = DispatcherConfig.builder().workerId("test-dispatcher").listenForNotifications(false).build();
        return new Dispatcher(dataSource, config, Map.of(CONFIRMATION, handler, SHIPPED, handler)).runOnce();
    }

    static int dispatch(DataSource dataSource, Map<String, Result> script) {
        return dispatch(dataSource, key -> script.getOrDefault(key, Result.SENT));
    }

    static int dispatchAll(DataSource dataSource, Result result) {
        return dispatch(dataSource, key -> result);
    }

    private static MessageHandler handler(DataSource dataSource, Function<String, Result> script) {
        IdempotencyStore store = new IdempotencyStore();
        DSLContext dsl = DSL.using(dataSource, SQLDialect.POSTGRES);
        return (ClaimedMessage m, io.mailroom.outbox.runtime.ClaimContext ctx) -> {
            Result result = script.apply(m.idempotencyKey());
            String key = m.idempotencyKey();
            int[] held = {1};
            if (result == Result.SUPPRESSED) {
                java.util.List<io.mailroom.delivery.suppression.Suppression> active = dsl.transactionResult(cfg ->
                        new io.mailroom.delivery.suppression.SuppressionList(io.mailroom.delivery.suppression.SuppressionConfig.defaults(), null)
                                .active(cfg.dsl(), java.util.List.of(recipient(m)))).get(recipient(m));
                if (active == null || active.isEmpty()) {
                    throw new IllegalStateException("test handler told to suppress " + key + ", but " + recipient(m) + " is not suppressed");
                }
                return new Outcome.Failed(active.getFirst().failureReason(), null, null);
            }
            if (result != Result.SENT_WITHOUT_RECORD) {
                String subject = "Your order " + m.aggregateId() + (m.topic().equals(SHIPPED) ? " is on its way" : " is confirmed");
                String descriptor = "{\"recipient\":\"" + recipient(m) + "\",\"subject\":\"" + subject + "\"}";
                Reservation r = dsl.transactionResult(cfg -> store.reserve(cfg.dsl(), key, Fingerprint.of(key), "test-dispatcher", descriptor));
                if (!(r instanceof Reservation.Reserved)) {
                    throw new IllegalStateException("test handler could not reserve " + key + ": " + r);
                }
                held[0] = ((Reservation.Reserved) r).reservationNumber();
            }
            String providerId = "prov-" + key + "-" + m.attempt();
            return switch (result) {
                case SENT -> new Outcome.Done("{\"transport\":\"http\",\"status\":202,\"providerMessageId\":\"" + providerId + "\"}",
                        tx -> store.recordSucceeded(tx, key, held[0], providerId));
                case SENT_WITHOUT_RECORD -> new Outcome.Done("{\"transport\":\"smtp\",\"replyCode\":250,\"messageId\":\"<" + key
                        + "@mailroom>\",\"reply\":\"250 2.0.0 Ok: queued as Q" + m.attempt() + "X" + m.aggregateId() + "\"}", null);
                case FAILED -> new Outcome.Failed("550 5.1.1 <" + recipient(m) + ">: mailbox unavailable",
                        "{\"transport\":\"smtp\",\"replyCode\":550}", tx -> store.recordFailed(tx, key, held[0], "550 mailbox unavailable"));
                case RETRY -> new Outcome.RetryLater("HTTP 503: provider busy", null, "{\"transport\":\"http\",\"status\":503}",
                        tx -> store.recordFailed(tx, key, held[0], "HTTP 503"));
                case NOT_ATTEMPTED -> new Outcome.NotAttempted(BREAKER_OPEN, java.time.Duration.ZERO, null,
                        tx -> store.release(tx, key, held[0]));
                case SUPPRESSED -> throw new IllegalStateException("handled above");
                case REVIEW -> new Outcome.Review("timeout after the message was sent; the outcome is unknown", null,
                        tx -> store.markAmbiguous(tx, key, held[0], "timeout after DATA"));
            };
        };
    }

    private static String recipient(ClaimedMessage m) {
        try {
            com.fasterxml.jackson.databind.JsonNode payload = SupportJson.mapper().readTree(m.payloadJson());
            return payload.path("to").path("address").asText(payload.path("customerEmail").asText("unknown@example.com"));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Stores a rendering of {@code m} as the dispatcher does before sending it (email_rendering, V7). */
    static void rendering(DSLContext dsl, EnqueuedMessage m, int attempt, String template, String locale, String subject,
                          String text, String html) {
        var r = io.mailroom.db.jooq.Tables.EMAIL_RENDERING;
        dsl.insertInto(r, r.IDEMPOTENCY_KEY, r.MESSAGE_ID, r.MESSAGE_CREATED_AT, r.ATTEMPT, r.TEMPLATE, r.TEMPLATE_VERSION,
                        r.LOCALE, r.SUBJECT, r.TEXT_PART, r.HTML_PART)
                .values(m.idempotencyKey(), m.id(), m.createdAt(), attempt, template,
                        (template == null ? "custom" : template) + "@0123456789abcdef", locale, subject, text, html)
                .execute();
    }

    /** Makes every pending email due now (a retry waits for its backoff otherwise). */
    static void makeDue(DSLContext dsl) {
        dsl.execute("UPDATE outbox_message SET available_at = now() WHERE status = 'pending'");
    }

    static void truncate(DSLContext dsl) {
        dsl.execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, audit_log, outbox_control, "
                + "email_rendering, delivery_event, delivery_state, delivery_recipient_state, suppression, soft_bounce_run");
    }

    /** Holds the queue row of {@code key} locked as a dispatcher would ({@code FOR NO KEY UPDATE}) until closed. */
    static Connection lockQueueRow(Connection c, String key) throws SQLException {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.executeQuery("SELECT m.id FROM outbox_message m JOIN outbox_effect e ON e.message_id = m.id "
                    + "AND e.message_created_at = m.created_at WHERE e.idempotency_key = '" + key.replace("'", "''")
                    + "' FOR NO KEY UPDATE OF m").close();
        }
        return c;
    }

    /** Holds the effect row of {@code key} locked (as a completing dispatcher does) until closed. */
    static Connection lockEffectRow(Connection c, String key) throws SQLException {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.executeQuery("SELECT 1 FROM outbox_effect WHERE idempotency_key = '" + key.replace("'", "''")
                    + "' FOR NO KEY UPDATE").close();
        }
        return c;
    }
}
