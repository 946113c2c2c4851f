package io.mailroom.email.service;

import com.sun.net.httpserver.HttpServer;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.dispatch.AmbiguityPolicy;
import io.mailroom.email.dispatch.EmailHandler;
import io.mailroom.email.dispatch.TransportGate;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.http.HttpMailTransport;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A rough figure, not a benchmark suite (see the benchmarks module): emails per second through the
 * real HTTP transport, idempotency store and outbox runtime, against an in-process stub provider
 * that answers 202 at once. Prints; asserts nothing.
 *
 * <p>{@code scripts/run-test-main.sh email-dispatcher io.mailroom.email.service.HttpThroughputProbe 5000 32}
 */
public final class HttpThroughputProbe {

    private static final String TOPIC = "email.receipt";

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        int concurrency = args.length > 1 ? Integer.parseInt(args[1]) : 32;
        AtomicLong requests = new AtomicLong();
        HttpServer stub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        stub.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        stub.createContext("/v1/emails", ex -> {
            ex.getRequestBody().readAllBytes();
            byte[] body = ("{\"id\":\"stub-" + requests.incrementAndGet() + "\"}").getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(202, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        stub.start();
        try (TestDatabase db = TestDatabases.create()) {
            db.dsl().execute("""
                    WITH m AS (
                      INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, payload)
                      SELECT 'email.receipt', 'order', g::text, 'email-order-' || g,
                             jsonb_build_object('v', 1, 'template', 'receipt', 'locale', 'en',
                               'to', jsonb_build_object('address', 'c' || g || '@example.com', 'name', 'Customer ' || g),
                               'headers', '{}'::jsonb,
                               'data', jsonb_build_object('customer', jsonb_build_object('name', 'Customer ' || g),
                                 'order', jsonb_build_object('id', g::text, 'currency', 'EUR', 'total', 25.00,
                                   'createdAt', '2026-12-02T10:00:00Z',
                                   'lines', jsonb_build_array(jsonb_build_object('sku', 'MUG-1', 'name', 'Mug',
                                     'quantity', 2, 'unitPrice', 12.50, 'amount', 25.00)))))
                      FROM generate_series(1, {0}) g RETURNING id, created_at, idempotency_key, aggregate_id)
                    INSERT INTO outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                               message_created_at, max_attempts)
                    SELECT idempotency_key, 'email.receipt', 'order', aggregate_id, id, created_at, 10 FROM m
                    """, n);
            HttpMailConfig http = HttpMailConfig.of(URI.create("http://127.0.0.1:" + stub.getAddress().getPort()), "tok");
            ResilientTransport transport = new ResilientTransport(new HttpMailTransport(http), TransportPolicyConfig.defaults());
            EmailHandler handler = new EmailHandler(db.dataSource(), new IdempotencyStore(),
                    new TemplatedComposer(TemplateCatalogue.load(io.mailroom.testing.TestTemplates.directory()), Map.of(TOPIC, new EmailTopics.Route(TOPIC, "receipt", null)),
                            EmailAddress.of("shop@example.com"), io.mailroom.email.Email.DEFAULT_MAX_BODY_BYTES), transport,
                    AmbiguityPolicy.resendWithKey(Duration.ofHours(24)), "probe", null);
            DispatcherConfig config = DispatcherConfig.builder().workerId("probe").batchSize(100).concurrency(concurrency).build();
            Dispatcher dispatcher = new Dispatcher(db.dataSource(), config, Map.of(TOPIC, handler),
                    new TransportGate(Map.of(TOPIC, transport)), null);
            long t0 = System.nanoTime();
            dispatcher.start();
            while (db.dsl().fetchSingle("SELECT count(*) FROM outbox_message WHERE status = 'done'").get(0, Integer.class) < n) {
                Thread.sleep(50);
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            dispatcher.stop();
            transport.close();
            System.out.printf("HTTP transport: %d emails in %.2f s = %.0f emails/s (%d provider requests; batch 100,"
                    + " concurrency %d, test pool of 10 connections)%n", n, seconds, n / seconds, requests.get(), concurrency);
        } finally {
            stub.stop(0);
        }
    }
}
