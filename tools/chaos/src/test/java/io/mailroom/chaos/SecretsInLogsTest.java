package io.mailroom.chaos;

import io.mailroom.email.service.MailroomCli;
import io.mailroom.orders.OrderServiceApp;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.ChildJvm;
import io.mailroom.testing.SmtpSink;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The security review's log check, on the real processes: the order service and a dispatcher
 * process per transport run with every secret set (database password, HTTP provider token, SMTP
 * password) and with Mailroom's own loggers at DEBUG; orders carry a marker that ends up in every
 * email body. The provider and the sink fail on purpose (500, 429, answers that never come, 451,
 * dropped connections), so the error paths log too. Their whole output must contain neither a secret
 * nor the marker.
 */
class SecretsInLogsTest {

    private final String dbPassword = "dbpw-" + UUID.randomUUID();
    private final String token = "tok-" + UUID.randomUUID();
    private final String smtpPassword = "smtppw-" + UUID.randomUUID();
    private final String marker = "BODYMARKER" + UUID.randomUUID().toString().replace("-", "");

    private final Path dir = Path.of("target", "secrets-in-logs").toAbsolutePath();
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<ChildJvm> children = new ArrayList<>();
    private TestDatabase db;
    private ProviderStub provider;
    private RecordedSmtpSink sink;

    @BeforeEach
    void setUp() throws Exception {
        Files.createDirectories(dir);
        try (var old = Files.list(dir)) {
            for (Path p : old.toList()) {
                Files.delete(p);
            }
        }
        db = TestDatabases.create();
        provider = ProviderStub.start(new ProviderStub.Settings(0, token, 7, 0.2, 0.1, 0.15, Duration.ofMillis(1500),
                Duration.ofDays(1), dir.resolve("provider.rec")));
        sink = RecordedSmtpSink.start(new SmtpSink.Settings(0, new SmtpSink.Faults(7, 0.1, 0.2, 0.15), "mailer", smtpPassword),
                dir.resolve("sink.rec"));
    }

    @AfterEach
    void tearDown() {
        children.forEach(c -> c.stop(20));
        provider.close();
        sink.close();
        http.close();
        db.close();
    }

    @Test
    void noSecretAndNoEmailBodyAppearsInAnyLog() throws Exception {
        ChildJvm orders = start("order-service", OrderServiceApp.class.getName(), List.of(), Map.of(
                "MAILROOM_DB_URL", db.jdbcUrl(),
                "MAILROOM_DB_PASSWORD", dbPassword,
                "MAILROOM_ORDERS_HOST", "127.0.0.1",
                "MAILROOM_ORDERS_PORT", "0",
                "MAILROOM_MIGRATE", "false"));
        int ordersPort = await().atMost(Duration.ofSeconds(90)).until(() -> port(orders.log()), p -> p > 0);

        Map<String, String> httpEnv = dispatcherEnv("secrets-http");
        httpEnv.put("MAILROOM_TRANSPORT", "http");
        httpEnv.put("MAILROOM_HTTP_BASE_URL", provider.baseUrl());
        httpEnv.put("MAILROOM_HTTP_TOKEN", token);
        httpEnv.put("MAILROOM_HTTP_TIMEOUT", "1000ms");
        ChildJvm httpDispatcher = start("dispatcher-http", MailroomCli.class.getName(), List.of("dispatcher", "run"), httpEnv);
        for (int i = 0; i < 8; i++) {
            placeOrder(ordersPort, i);
        }
        awaitFinished(8);
        // The provider's faults are drawn at random too: place more orders until a 500 and an accepted-then-hung
        // request have both happened, so that both paths' log lines are among those checked below.
        int httpOrders = 8;
        for (; httpOrders < 68 && !Records.provider(dir.resolve("provider.rec")).stream().map(Records.ProviderLine::kind)
                .toList().containsAll(List.of("fault-500", "accepted-hung")); httpOrders++) {
            placeOrder(ordersPort, httpOrders);
            awaitFinished(httpOrders + 1);
        }
        httpDispatcher.stop(30);

        Map<String, String> smtpEnv = dispatcherEnv("secrets-smtp");
        smtpEnv.put("MAILROOM_TRANSPORT", "smtp");
        smtpEnv.put("MAILROOM_SMTP_HOST", "127.0.0.1");
        smtpEnv.put("MAILROOM_SMTP_PORT", Integer.toString(sink.port()));
        smtpEnv.put("MAILROOM_SMTP_SECURITY", "none");
        smtpEnv.put("MAILROOM_SMTP_USERNAME", "mailer");
        smtpEnv.put("MAILROOM_SMTP_PASSWORD", smtpPassword);
        smtpEnv.put("MAILROOM_SMTP_FROM", "Shop <shop@example.com>");
        smtpEnv.put("MAILROOM_SMTP_READ_TIMEOUT", "3000ms");
        ChildJvm smtpDispatcher = start("dispatcher-smtp", MailroomCli.class.getName(), List.of("dispatcher", "run"), smtpEnv);
        for (int i = httpOrders; i < httpOrders + 8; i++) {
            placeOrder(ordersPort, i);
        }
        // and one the renderer refuses, with the marker in the field it names
        db.dsl().transaction(cfg -> new OutboxEnqueuer().enqueue(cfg.dsl(), NewMessage.of("email.order_confirmation",
                "order", "999", "email-order-999", "{\"orderId\":999,\"customerEmail\":\"" + marker + "@@example.com\","
                        + "\"customerName\":\"" + marker + "\",\"currency\":\"EUR\",\"total\":\"1.00\","
                        + "\"createdAt\":\"2026-12-02T10:00:00Z\",\"lines\":[]}")));
        awaitFinished(httpOrders + 9);
        // The sink's faults are drawn at random (20 % of messages get a 451 after DATA): place more orders until
        // the deferral path has run too, so that its log lines are among those checked below. The
        // chance of none in 60 more is below 1e-5.
        int finished = httpOrders + 9;
        for (int i = httpOrders + 8; i < httpOrders + 68 && Records.sink(dir.resolve("sink.rec")).stream().noneMatch(l -> l.kind().equals("deferred-451")); i++) {
            placeOrder(ordersPort, i);
            awaitFinished(++finished);
        }
        smtpDispatcher.stop(30);
        orders.stop(30);

        // the error paths did run
        List<Records.ProviderLine> requests = Records.provider(dir.resolve("provider.rec"));
        assertThat(requests).extracting(Records.ProviderLine::kind).contains("fault-500", "accepted-hung");
        assertThat(Records.sink(dir.resolve("sink.rec"))).extracting(Records.SinkLine::kind).contains("deferred-451");
        assertThat(db.dsl().fetchCount(db.dsl().selectFrom("outbox_message").where("status = 'done'"))).isPositive();

        String ordersLog = Files.readString(orders.log());
        String httpLog = Files.readString(httpDispatcher.log());
        String smtpLog = Files.readString(smtpDispatcher.log());
        // the configurations were logged, masked
        assertThat(ordersLog).contains("Placed order").contains("****");
        assertThat(httpLog).contains("dbPassword=****").contains("token=****").contains("Dispatcher secrets-http stopped");
        assertThat(smtpLog).contains("dbPassword=****").contains("password=****").contains("Dispatcher secrets-smtp stopped");
        for (String secret : List.of(dbPassword, token, smtpPassword, marker)) {
            assertThat(ordersLog).doesNotContain(secret);
            assertThat(httpLog).doesNotContain(secret);
            assertThat(smtpLog).doesNotContain(secret);
        }
    }

    private Map<String, String> dispatcherEnv(String worker) {
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_TEMPLATES_DIR", io.mailroom.orders.ShopTemplates.temporaryCopy().toString()); // the shop's templates
        env.put("MAILROOM_DB_URL", db.jdbcUrl());
        env.put("MAILROOM_DB_PASSWORD", dbPassword);
        env.put("MAILROOM_MIGRATE", "false");
        env.put("MAILROOM_MAIL_FROM", "Shop <shop@example.com>");
        env.put("MAILROOM_WORKER_ID", worker);
        env.put("MAILROOM_DISPATCHER_HOST", "127.0.0.1");
        env.put("MAILROOM_DISPATCHER_PORT", "0");
        env.put("MAILROOM_POLL_INTERVAL", "200ms");
        env.put("MAILROOM_LEASE", "10s");
        return env;
    }

    private ChildJvm start(String name, String main, List<String> args, Map<String, String> env) {
        Map<String, String> childEnv = new HashMap<>(env);
        childEnv.put("MAILROOM_TEST_DB_URL", null);
        ChildJvm child = ChildJvm.of(name, main).jvmOptions(List.of("-Xmx192m", "-XX:TieredStopAtLevel=1",
                "--enable-native-access=ALL-UNNAMED", "-Dlogback.configurationFile=secrets-logback.xml"))
                .args(args).env(childEnv).log(dir.resolve(name + ".log")).appendLog().start();
        children.add(child);
        return child;
    }

    private void placeOrder(int port, int i) throws Exception {
        String body = """
                {"customerEmail":"buyer%d@example.com","customerName":"Ann %s","currency":"EUR",
                 "lines":[{"sku":"MUG-1","name":"Mug %s","quantity":1,"unitPrice":9.50}]}""".formatted(i, marker, marker);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    }

    private void awaitFinished(int n) {
        await().atMost(Duration.ofSeconds(120)).until(() -> db.dsl().fetchCount(db.dsl().selectFrom("outbox_message")
                .where("status IN ('done', 'failed', 'review')")) == n);
    }

    private static int port(Path log) throws java.io.IOException {
        Matcher m = Pattern.compile("Order service ready: POST http://localhost:(\\d+)/orders")
                .matcher(Files.exists(log) ? Files.readString(log) : "");
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }
}
