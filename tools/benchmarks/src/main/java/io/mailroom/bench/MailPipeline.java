package io.mailroom.bench;

import io.mailroom.email.service.MailroomCli;
import io.mailroom.email.transport.smtp.MessageIds;
import io.mailroom.orders.OrderService;
import io.mailroom.orders.OrderServiceApp;
import io.mailroom.testing.ChildJvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The system under test of scenarios 3 to 5, every part a process of its own on this class path:
 * the order service ({@link OrderServiceApp}, optional: scenario 5 writes its orders in the benchmark
 * JVM to know their commit time), the dispatcher service exactly as operators run it
 * ({@code mailroom dispatcher run}, {@link MailroomCli}, configured by {@code MAILROOM_*} variables)
 * and the loopback provider it sends to ({@link StubProviderMain} for the HTTP transport,
 * {@link SmtpSinkMain} for SMTP). All three start at once on ports chosen beforehand; {@link #start}
 * returns when both services answer {@code /health/ready} and the provider has said {@code READY}.
 *
 * <p>The services run with their defaults (dispatcher: batch, concurrency, poll interval, LISTEN,
 * Resilience4j policies, pool size; order service: pool and HTTP threads) except for what
 * {@link Settings#serviceEnv()} overrides; their logging is warnings only, as for the benchmark.
 */
final class MailPipeline implements AutoCloseable {

    enum Transport {
        HTTP, SMTP;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Domain of the SMTP Message-IDs, so the sink's ids can be matched with the orders. */
    static final String MESSAGE_ID_DOMAIN = "bench.mailroom.test";
    static final String FROM = "Mailroom Bench <shop@" + MESSAGE_ID_DOMAIN + ">";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    /**
     * @param name              prefix of the processes' log files and {@code application_name}s
     * @param orderService      whether to run the order service (scenarios 3 and 4) or not (5)
     * @param serviceJvmOptions extra options of both service JVMs (e.g. a JFR recording)
     * @param serviceEnv        extra {@code MAILROOM_*} settings of the dispatcher, overriding the benchmark's
     * @param fastStart         start every process with C1 only and the serial GC ({@link #FAST_START}): for
     *                          {@code --quick}, where start-up is most of the time and no figure means anything
     */
    record Settings(String name, Transport transport, boolean orderService, List<String> serviceJvmOptions,
                    Map<String, String> serviceEnv, Path logDir, boolean fastStart, String dispatcherMain,
                    List<String> externalSmtp, String dispatcherClassPath) {

        Settings(String name, Transport transport, boolean orderService, List<String> serviceJvmOptions,
                 Map<String, String> serviceEnv, Path logDir, boolean fastStart) {
            this(name, transport, orderService, serviceJvmOptions, serviceEnv, logDir, fastStart,
                    MailroomCli.class.getName(), null, null);
        }

        /**
         * The dispatcher from another build's class path (null: this JVM's), e.g. the commit before a
         * change, so that one run measures both.
         */
        Settings withDispatcherClassPath(String classPath) {
            return new Settings(name, transport, orderService, serviceJvmOptions, serviceEnv, logDir, fastStart,
                    dispatcherMain, externalSmtp, classPath);
        }

        /**
         * @param dispatcherMain the dispatcher's main class: {@link MailroomCli}, or
         *                       {@link CensusDispatcherMain} (a controlled child) for a statement census
         * @param externalSmtp   if not null, the SMTP server is this command (not written here, so no
         *                       acceptance stamps) with {@code 127.0.0.1:<port>} appended
         */
        Settings withDispatcher(String dispatcherMain, List<String> externalSmtp) {
            return new Settings(name, transport, orderService, serviceJvmOptions, serviceEnv, logDir, fastStart,
                    dispatcherMain, externalSmtp, dispatcherClassPath);
        }
    }

    /** JVM options that start a process in about half the CPU time, at the expense of its peak speed. */
    static final List<String> FAST_START = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    private final Settings settings;
    private final List<ChildJvm> children = new ArrayList<>();
    private ChildJvm provider;
    private Process external;
    private ChildJvm dispatcher;
    private ChildJvm orders;
    private int ordersPort;
    private int dispatcherPort;

    private MailPipeline(Settings settings) {
        this.settings = settings;
    }

    static MailPipeline start(BenchDb db, Settings settings) throws Exception {
        MailPipeline p = new MailPipeline(settings);
        try {
            p.startAll(db);
            return p;
        } catch (Exception | Error e) {
            p.close();
            throw e;
        }
    }

    private void startAll(BenchDb db) throws Exception {
        List<String> providerJvm = new ArrayList<>(List.of("-Xmx256m"));
        List<String> serviceJvm = new ArrayList<>(List.of("-Xmx512m", "--enable-native-access=ALL-UNNAMED"));
        if (settings.fastStart()) {
            providerJvm.addAll(FAST_START);
            serviceJvm.addAll(FAST_START);
        }
        serviceJvm.addAll(settings.serviceJvmOptions());
        // warnings only, to stderr: the services' own logback.xml would log a line per order and per email
        String quietLogging = "-D" + Logging.CONFIG_PROPERTY + "=" + Logging.CONFIG_RESOURCE;
        providerJvm.add(quietLogging);
        serviceJvm.add(quietLogging);
        String token = HexFormat.of().formatHex(SecureRandom.getSeed(16));
        int providerPort = freePort();

        Map<String, String> providerEnv = settings.transport() == Transport.HTTP
                ? Map.of(StubProviderMain.TOKEN_ENV, token) : Map.of();
        String providerMain = settings.transport() == Transport.HTTP
                ? StubProviderMain.class.getName() : SmtpSinkMain.class.getName();
        if (settings.externalSmtp() != null) {
            if (settings.transport() != Transport.SMTP) {
                throw new IllegalArgumentException("an external provider is an SMTP server: transport must be smtp");
            }
            List<String> command = new ArrayList<>(settings.externalSmtp());
            command.add("127.0.0.1:" + providerPort);
            external = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(log("provider").toFile()).start();
            Process p = external;
            Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly, "kill-external-smtp"));
        } else {
            provider = ChildJvm.of(settings.name() + "-provider", providerMain).jvmOptions(providerJvm)
                    // the sink advertises PIPELINING, as Postfix and the big relays do
                    .args(settings.transport() == Transport.HTTP ? List.of(Integer.toString(providerPort))
                            : List.of(Integer.toString(providerPort), "pipelining"))
                    .env(providerEnv).log(log("provider")).controlled().start();
            children.add(provider);
        }

        if (settings.orderService()) {
            ordersPort = freePort();
            Map<String, String> env = new HashMap<>();
            env.put("MAILROOM_DB_URL", withApplicationName(db.url(), settings.name() + "-orders"));
            env.put("MAILROOM_MIGRATE", "false");
            env.put("MAILROOM_ORDERS_HOST", "127.0.0.1");
            env.put("MAILROOM_ORDERS_PORT", Integer.toString(ordersPort));
            orders = ChildJvm.of(settings.name() + "-orders", OrderServiceApp.class.getName()).jvmOptions(serviceJvm)
                    .env(env).log(log("orders")).start();
            children.add(orders);
        }

        dispatcherPort = freePort();
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_TEMPLATES_DIR", io.mailroom.orders.ShopTemplates.temporaryCopy().toString()); // the shop's templates
        env.put("MAILROOM_DB_URL", withApplicationName(db.url(), settings.name() + "-dispatcher"));
        env.put("MAILROOM_MIGRATE", "false");
        env.put("MAILROOM_WORKER_ID", settings.name() + "-dispatcher");
        env.put("MAILROOM_DISPATCHER_HOST", "127.0.0.1");
        env.put("MAILROOM_DISPATCHER_PORT", Integer.toString(dispatcherPort));
        env.put("MAILROOM_MAIL_FROM", FROM);
        if (settings.transport() == Transport.HTTP) {
            env.put("MAILROOM_TRANSPORT", "http");
            env.put("MAILROOM_HTTP_BASE_URL", "http://127.0.0.1:" + providerPort);
            env.put("MAILROOM_HTTP_TOKEN", token);
        } else {
            env.put("MAILROOM_TRANSPORT", "smtp");
            env.put("MAILROOM_SMTP_HOST", "127.0.0.1");
            env.put("MAILROOM_SMTP_PORT", Integer.toString(providerPort));
            env.put("MAILROOM_SMTP_SECURITY", "none");
            env.put("MAILROOM_SMTP_FROM", FROM);
            env.put("MAILROOM_SMTP_MESSAGE_ID_DOMAIN", MESSAGE_ID_DOMAIN);
        }
        env.putAll(settings.serviceEnv());
        boolean census = settings.dispatcherMain().equals(CensusDispatcherMain.class.getName());
        ChildJvm.Builder d = ChildJvm.of(settings.name() + "-dispatcher", settings.dispatcherMain()).jvmOptions(serviceJvm)
                .args(census ? List.of() : List.of("dispatcher", "run")).env(env).log(log("dispatcher"));
        if (settings.dispatcherClassPath() != null) {
            d.classPath(settings.dispatcherClassPath());
        }
        dispatcher = (census ? d.controlled() : d).start();
        children.add(dispatcher);

        if (external != null) {
            awaitListening(providerPort, System.nanoTime() + START_TIMEOUT.toNanos());
        } else {
            String ready = provider.expect("READY ");
            if (!ready.equals("READY " + providerPort)) {
                throw new IllegalStateException(provider.name() + " answered '" + ready + "', expected READY " + providerPort);
            }
        }
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build()) {
            if (orders != null) {
                awaitReady(http, orders, ordersPort, deadline);
            }
            awaitReady(http, dispatcher, dispatcherPort, deadline);
        }
    }

    private void awaitListening(int port, long deadline) throws InterruptedException {
        while (true) {
            if (!external.isAlive()) {
                throw new IllegalStateException(String.join(" ", settings.externalSmtp()) + " exited during start-up; see "
                        + log("provider"));
            }
            try (java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (IOException e) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the external SMTP server did not listen on " + port + " within "
                        + START_TIMEOUT.toSeconds() + " s; see " + log("provider"));
            }
            Thread.sleep(100);
        }
    }

    /** The provider's process id, whichever kind it is. */
    long providerPid() {
        return external != null ? external.pid() : provider.pid();
    }

    /** Whether the provider stamps what it accepts ({@link Acceptances}); an external server does not. */
    boolean providerCounts() {
        return external == null;
    }

    /** The id under which the provider records the email of idempotency key {@code key}. */
    String providerIdForKey(String key) {
        return settings.transport() == Transport.HTTP ? key : MessageIds.forKey(key, MESSAGE_ID_DOMAIN);
    }

    private Path log(String part) {
        return settings.logDir().resolve(settings.name() + "-" + part + ".log");
    }

    private static void awaitReady(HttpClient http, ChildJvm child, int port, long deadline) throws InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + port + "/health/ready");
        while (true) {
            if (!child.isAlive()) {
                throw new IllegalStateException(child.name() + " exited during start-up; see " + child.log());
            }
            try {
                HttpResponse<Void> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).GET().build(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(child.name() + " did not answer 200 on " + uri + " within "
                        + START_TIMEOUT.toSeconds() + " s; see " + child.log());
            }
            Thread.sleep(100);
        }
    }

    /** {@code POST /orders} of the order service. */
    URI ordersUri() {
        if (orders == null) {
            throw new IllegalStateException("this pipeline runs no order service");
        }
        return URI.create("http://127.0.0.1:" + ordersPort + "/orders");
    }

    /** The processes of the system under test: order service (if any) and dispatcher. */
    List<ChildJvm> services() {
        return orders == null ? List.of(dispatcher) : List.of(orders, dispatcher);
    }

    ChildJvm dispatcher() {
        return dispatcher;
    }

    ChildJvm orderService() {
        return orders;
    }

    ChildJvm provider() {
        return provider;
    }

    /** What the provider has accepted so far. */
    Acceptances.Count count() throws IOException {
        provider.send("COUNT");
        return Acceptances.Count.parse(provider.expect("COUNT "));
    }

    /** Every id the provider accepted, with its first acceptance time and count. */
    Map<String, Acceptances.Entry> acceptances(Path file) throws IOException {
        provider.send("DUMP " + file.toAbsolutePath());
        provider.expect("DUMPED ");
        return Acceptances.read(file);
    }

    /** The id under which the provider records the confirmation of {@code orderId}. */
    String providerId(long orderId) {
        return providerIdForKey(OrderService.idempotencyKey(orderId));
    }

    /**
     * Waits until the provider has accepted {@code expected} distinct emails; false if that did not
     * happen by {@code deadlineNanos} or a service died.
     */
    boolean awaitAccepted(long expected, long deadlineNanos) throws IOException, InterruptedException {
        while (count().distinct() < expected) {
            if (System.nanoTime() > deadlineNanos || services().stream().anyMatch(c -> !c.isAlive())) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** Names what is wrong with the processes, for a failed row: who died, where the logs are. */
    String describe() {
        StringBuilder sb = new StringBuilder();
        if (external != null) {
            sb.append("external SMTP server").append(external.isAlive() ? " running" : " EXITED")
                    .append(" (log ").append(log("provider")).append(')');
        }
        for (ChildJvm c : children) {
            sb.append(sb.isEmpty() ? "" : "; ").append(c.name()).append(c.isAlive() ? " running" : " EXITED")
                    .append(" (log ").append(c.log()).append(')');
        }
        return sb.toString();
    }

    /**
     * Graceful stops, side by side (each waits for its own process): the services on SIGTERM
     * finish or hand back what they hold; the provider is told to stop after them, so no
     * in-flight send meets a closed port.
     */
    @Override
    public void close() {
        List<Thread> stopping = new ArrayList<>();
        if (dispatcher != null) {
            stopping.add(Thread.ofVirtual().start(() -> dispatcher.stop(30)));
        }
        if (orders != null) {
            stopping.add(Thread.ofVirtual().start(() -> orders.stop(20)));
        }
        for (Thread t : stopping) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (external != null) {
            external.destroy();
            try {
                if (!external.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    external.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                external.destroyForcibly();
            }
        }
        if (provider != null && provider.isAlive()) {
            try {
                provider.send("STOP");
            } catch (IOException e) {
                // already going
            }
            provider.stop(10);
        }
    }

    static String withApplicationName(String url, String name) {
        return url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + name;
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }
}
