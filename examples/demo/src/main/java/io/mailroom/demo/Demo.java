package io.mailroom.demo;

import com.icegreen.greenmail.util.GreenMail;
import com.icegreen.greenmail.util.ServerSetup;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.email.service.DatabaseStartupException;
import io.mailroom.email.service.DispatcherService;
import io.mailroom.email.service.ServiceConfig;
import io.mailroom.orders.EmbeddedDatabase;
import io.mailroom.orders.OrderServiceApp;
import io.mailroom.orders.OrderServiceConfig;
import io.mailroom.orders.ShopTemplates;
import io.mailroom.support.BindAddress;
import jakarta.mail.Address;
import jakarta.mail.MessagingException;
import jakarta.mail.internet.MimeMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The whole system in one process, for a first look: a PostgreSQL (embedded under
 * {@code .mailroom/pg17} unless {@code MAILROOM_DB_URL} names one), an SMTP sink on
 * 127.0.0.1:3025 that keeps what it receives, the order service on :8081 and a dispatcher on :8082
 * sending through the sink. It places three sample orders (one in Vietnamese), ships one and cancels
 * another, prints every email as it arrives and
 * where to look, and stops cleanly on Ctrl-C.
 */
public final class Demo implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Demo.class);
    public static final int SMTP_PORT = 3025;

    private EmbeddedDatabase embedded;
    private GreenMail smtpSink;
    private OrderServiceApp orders;
    private DispatcherService dispatcher;
    private ScheduledExecutorService mailboxWatcher;
    private java.nio.file.Path shopTemplates;

    /** {@code java -jar mailroom-demo.jar}: runs until Ctrl-C or SIGTERM; exit 2 on bad settings, 1 on other failures. */
    public static void main(String[] args) throws InterruptedException {
        io.mailroom.db.PostgresVersions.replaceJooqVersionCheck();
        if (args.length > 0) {
            System.err.println("mailroom-demo takes no arguments (settings come from MAILROOM_* variables; see README.md)");
            System.exit(2);
        }
        try {
            run(System.getenv());
        } catch (IllegalArgumentException e) { // InvalidSettingException included
            System.err.println("mailroom demo: invalid configuration: " + e.getMessage());
            System.exit(2);
        } catch (DatabaseStartupException e) {
            System.err.println("mailroom demo: " + e.getMessage());
            System.exit(1);
        }
    }

    public static void run(Map<String, String> environment) throws InterruptedException {
        Demo demo = new Demo();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            demo.close();
            stopped.countDown();
        }, "demo-shutdown"));
        demo.start(environment);
        demo.placeSampleOrders();
        stopped.await();
    }

    /** Binds {@code variable} to 127.0.0.1 unless it names a loopback address already; refuses any other. */
    private static void loopbackOnly(Map<String, String> env, String variable) {
        String host = env.get(variable);
        if (host == null || host.isBlank()) {
            env.put(variable, "127.0.0.1");
        } else if (!BindAddress.isLoopback(host)) {
            throw new InvalidSettingException(variable, "the demo listens on loopback only; " + variable + "=" + host
                    + " is not a loopback address (127.0.0.1, ::1 or localhost). Run the services one by one to"
                    + " listen elsewhere");
        }
    }

    void start(Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        // a first look runs on this machine only: its servers bind loopback (the support console runs
        // in demo mode, without sign-in)
        loopbackOnly(env, OrderServiceConfig.ENV_HOST);
        loopbackOnly(env, "MAILROOM_DISPATCHER_HOST");
        loopbackOnly(env, "MAILROOM_SUPPORT_HOST");
        String url = env.get("MAILROOM_DB_URL");
        if (url == null || url.isBlank()) {
            embedded = EmbeddedDatabase.start(env);
            url = embedded.jdbcUrl();
        }
        int smtpPort = Integer.parseInt(env.getOrDefault("MAILROOM_DEMO_SMTP_PORT", String.valueOf(SMTP_PORT)));
        smtpSink = new GreenMail(new ServerSetup(smtpPort, "127.0.0.1", ServerSetup.PROTOCOL_SMTP));
        smtpSink.start();

        orders = OrderServiceApp.start(OrderServiceConfig.fromEnvironment(env).withJdbcUrl(url));

        env.put("MAILROOM_DB_URL", url);
        env.put("MAILROOM_MIGRATE", "false"); // the order service just did
        if (env.get("MAILROOM_TEMPLATES_DIR") == null || env.get("MAILROOM_TEMPLATES_DIR").isBlank()) {
            // the shop's templates are the shop's (Mailroom ships only layouts): the dispatcher serves a copy of them
            try {
                shopTemplates = ShopTemplates.copyTo(java.nio.file.Files.createTempDirectory("mailroom-demo-templates"));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot copy the shop's templates", e);
            }
            env.put("MAILROOM_TEMPLATES_DIR", shopTemplates.toString());
        }
        env.putIfAbsent("MAILROOM_TRANSPORT", "smtp");
        env.putIfAbsent("MAILROOM_SMTP_HOST", "127.0.0.1");
        env.putIfAbsent("MAILROOM_SMTP_PORT", String.valueOf(smtpPort));
        env.putIfAbsent("MAILROOM_SMTP_SECURITY", "none");
        env.putIfAbsent("MAILROOM_SMTP_FROM", "Mailroom Shop <shop@mailroom.test>");
        env.putIfAbsent("MAILROOM_POLL_INTERVAL", "1s");
        env.putIfAbsent("MAILROOM_WORKER_ID", "demo-dispatcher");
        env.putIfAbsent("MAILROOM_SUPPORT", "on");
        env.putIfAbsent("MAILROOM_SUPPORT_DEMO", "true"); // loopback only: everyone is operator "demo"
        dispatcher = DispatcherService.start(ServiceConfig.fromEnv(env));

        mailboxWatcher = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("demo-mailbox").unstarted(r));
        // GreenMail lists received messages mailbox by mailbox, not in arrival order, so a position
        // says nothing about which are new: remember the stored messages themselves (a second copy
        // of an email is another stored message, and is printed again).
        Set<MimeMessage> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        mailboxWatcher.scheduleWithFixedDelay(() -> {
            for (MimeMessage m : smtpSink.getReceivedMessages()) {
                if (seen.add(m)) {
                    describe(m);
                }
            }
        }, 500, 500, TimeUnit.MILLISECONDS);

        int ordersPort = orders.server().port();
        log.info("""

                ============================================================================
                 Mailroom demo is running.
                   place an order : curl -X POST localhost:{}/orders -H 'Content-Type: application/json' \\
                                      -d '{"customerEmail":"you@example.com","customerName":"You","currency":"EUR","locale":"vi",\\
                                           "lines":[{"sku":"MUG-1","name":"Mug","quantity":1,"unitPrice":9.90}]}'
                   order health   : http://localhost:{}/health/ready
                   dispatcher     : http://localhost:{}/health/ready   metrics: /metrics
                   support console: http://localhost:{}/   (demo mode: no sign-in, loopback only)
                   SMTP sink      : 127.0.0.1:{} (every email received is printed below)
                   database       : {}
                 Ctrl-C stops everything.
                ============================================================================""",
                ordersPort, ordersPort, dispatcher.port(), dispatcher.supportPort(), smtpPort, url.replaceAll("(?i)(password=)[^&]*", "$1****"));
    }

    /**
     * Three sample orders, one in Vietnamese, then a shipment of the first and a cancellation of the
     * third: five emails of the shop's three kinds, each in its customer's language.
     */
    void placeSampleOrders() {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        String[][] customers = {{"ann@example.com", "Ann Lee", "en"}, {"anh@example.com", "Nguyễn Thị Ánh", "vi"},
                {"bob@example.com", "Bob <Builder> & Sons", "en"}};
        List<Long> placed = new java.util.ArrayList<>();
        for (String[] c : customers) {
            String body = """
                    {"customerEmail":"%s","customerName":"%s","currency":"EUR","locale":"%s",
                     "lines":[{"sku":"MUG-1","name":"Mug","quantity":2,"unitPrice":12.50},
                              {"sku":"TEA-7","name":"Green tea","quantity":1,"unitPrice":6.90}]}""".formatted(c[0], c[1], c[2]);
            String answer = post(client, "/orders", body);
            java.util.regex.Matcher id = java.util.regex.Pattern.compile("\"orderId\":(\\d+)").matcher(answer == null ? "" : answer);
            if (id.find()) {
                placed.add(Long.parseLong(id.group(1)));
            }
        }
        if (placed.size() == customers.length) {
            post(client, "/orders/" + placed.get(0) + "/shipment",
                    "{\"carrier\":\"Giao Hàng Nhanh\",\"trackingNumber\":\"GHN-7731\",\"trackingUrl\":\"https://track.example.com/GHN-7731\"}");
            post(client, "/orders/" + placed.get(2) + "/cancellation", "{\"reason\":\"Changed my mind\"}");
        }
    }

    /** The answer's body, or null when the request failed (logged either way). */
    private String post(HttpClient client, String path, String body) {
        try {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + orders.server().port() + path))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            log.info("Sample POST {}: HTTP {} {}", path, r.statusCode(), r.body());
            return r.body();
        } catch (Exception e) {
            log.warn("Could not POST a sample {}: {}", path, e.toString());
            return null;
        }
    }

    private static void describe(MimeMessage m) {
        try {
            Address[] to = m.getAllRecipients();
            log.info("SMTP sink received: to {} | subject \"{}\" | Message-ID {}",
                    to == null ? "?" : ((jakarta.mail.internet.InternetAddress) to[0]).toUnicodeString(),
                    m.getSubject(), m.getMessageID());
        } catch (MessagingException e) {
            log.info("SMTP sink received a message it could not describe: {}", e.toString());
        }
    }

    private static void deleteQuietly(java.nio.file.Path dir) {
        try (java.util.stream.Stream<java.nio.file.Path> walk = java.nio.file.Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            log.debug("Could not remove the demo's copy of the shop's templates at {}: {}", dir, e.toString());
        }
    }

    GreenMail smtpSink() {
        return smtpSink;
    }

    OrderServiceApp orders() {
        return orders;
    }

    DispatcherService dispatcher() {
        return dispatcher;
    }

    @Override
    public synchronized void close() {
        if (mailboxWatcher != null) {
            mailboxWatcher.shutdownNow();
        }
        if (dispatcher != null) {
            dispatcher.close();
            dispatcher = null;
        }
        if (orders != null) {
            orders.close();
            orders = null;
        }
        if (smtpSink != null) {
            smtpSink.stop();
            smtpSink = null;
        }
        if (embedded != null) {
            embedded.close();
            embedded = null;
        }
        if (shopTemplates != null) {
            deleteQuietly(shopTemplates);
            shopTemplates = null;
        }
    }
}
