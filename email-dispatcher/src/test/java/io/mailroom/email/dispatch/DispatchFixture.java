package io.mailroom.email.dispatch;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.email.resilience.PolicyRegistries;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Backoff;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.templates.TemplateException;
import org.jooq.DSLContext;
import org.jooq.Record;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/** Shared pieces of the dispatch tests: payloads, enqueueing, and a dispatcher around a transport. */
final class DispatchFixture {

    static final String TOPIC = "email.receipt";
    static final EmailAddress SHOP = EmailAddress.of("shop@example.com", "Example Shop");
    static final TemplateCatalogue TEMPLATES = testTemplates();

    private static TemplateCatalogue testTemplates() {
        try {
            return TemplateCatalogue.load(io.mailroom.testing.TestTemplates.directory());
        } catch (TemplateException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The dispatcher's composer for {@link #TOPIC}: the test template {@code receipt}. */
    static TemplatedComposer composer(long maxBodyBytes) {
        return new TemplatedComposer(TEMPLATES, Map.of(TOPIC, new EmailTopics.Route(TOPIC, "receipt", null)), SHOP,
                maxBodyBytes);
    }

    static TemplatedComposer composer() {
        return composer(io.mailroom.email.Email.DEFAULT_MAX_BODY_BYTES);
    }

    private DispatchFixture() {
    }

    /**
     * A receipt's envelope as {@code EmailOutbox} writes it; {@code email} and {@code name}
     * go in as JSON string content (so a test can write {@code \\r\\n} to smuggle a line break).
     */
    static String payload(long orderId, String email, String name) {
        return """
                {"v":1,"template":"receipt","locale":"en","to":{"address":"%s","name":"%s"},"headers":{},
                 "data":{"customer":{"name":"%s"},"order":{"id":"%d","currency":"EUR","total":25.00,
                 "createdAt":"2026-12-02T10:00:00Z",
                 "lines":[{"sku":"MUG-1","name":"Mug","quantity":2,"unitPrice":12.50,"amount":25.00}]}}}"""
                .formatted(email, name, name, orderId);
    }

    static String key(long orderId) {
        return "email-order-" + orderId;
    }

    static void enqueue(DSLContext dsl, long orderId, String payload) {
        new OutboxEnqueuer(null, false).enqueueAll(dsl, java.util.List.of(
                NewMessage.of(TOPIC, "order", String.valueOf(orderId), key(orderId), payload)));
    }

    static void enqueueOrder(DSLContext dsl, long orderId) {
        dsl.transaction(cfg -> enqueue(cfg.dsl(), orderId, payload(orderId, "customer" + orderId + "@example.com", "Customer " + orderId)));
    }

    static ResilientTransport resilient(MailTransport transport, TransportPolicyConfig policies) {
        return new ResilientTransport(transport, policies, PolicyRegistries.create(), Clock.systemUTC());
    }

    static Dispatcher dispatcher(javax.sql.DataSource dataSource, ResilientTransport transport, AmbiguityPolicy policy,
                                 int batchSize) {
        return dispatcher(dataSource, transport, policy, batchSize, h -> h);
    }

    /** A dispatcher whose handler is wrapped, e.g. by {@link #dyingBeforeRecording}. */
    static Dispatcher dispatcher(javax.sql.DataSource dataSource, ResilientTransport transport, AmbiguityPolicy policy,
                                 int batchSize, java.util.function.UnaryOperator<io.mailroom.outbox.runtime.MessageHandler> wrap) {
        io.mailroom.outbox.runtime.MessageHandler handler = wrap.apply(new EmailHandler(dataSource, new IdempotencyStore(),
                composer(), transport, policy, "test-worker", null));
        DispatcherConfig config = DispatcherConfig.builder().workerId("test-worker").batchSize(batchSize)
                .backoff(new Backoff(Duration.ofSeconds(2), Duration.ofMinutes(1), 2, 0)).build();
        return new Dispatcher(dataSource, config, Map.of(TOPIC, handler), new TransportGate(Map.of(TOPIC, transport)), null);
    }

    /** Makes every waiting message available now, as if its backoff had passed. */
    static void makeDue(DSLContext dsl) {
        dsl.execute("UPDATE outbox_message SET available_at = now() WHERE status = 'pending'");
    }

    static Record message(DSLContext dsl, long orderId) {
        return dsl.selectFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key(orderId))).fetchSingle();
    }

    static Record idempotency(DSLContext dsl, long orderId) {
        return dsl.selectFrom(IDEMPOTENCY_RECORD).where(IDEMPOTENCY_RECORD.EFFECT_KEY.eq(key(orderId))).fetchOne();
    }

    /**
     * The crash window: the handler sends for real, and the process "dies" before the outcome (and
     * with it the idempotency record) is written. The dispatcher sees only an exception.
     */
    static io.mailroom.outbox.runtime.MessageHandler dyingBeforeRecording(io.mailroom.outbox.runtime.MessageHandler real) {
        return (message, context) -> {
            real.handle(message, context);
            throw new IllegalStateException("process died after the provider accepted, before recording");
        };
    }
}
