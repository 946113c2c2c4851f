package io.mailroom.bench;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.transport.SendResult;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.http.HttpMailTransport;
import io.mailroom.email.transport.http.JsonMailApiAdapter;
import io.mailroom.testing.ChildJvm;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;

/**
 * The HTTP client comparison behind {@code HttpMailTransport}'s client: the JDK's
 * {@link java.net.http.HttpClient} on HTTP/1.1 and on cleartext HTTP/2 (its {@code Upgrade: h2c}),
 * Jetty 12.1's client on HTTP/1.1 and on HTTP/2 with prior knowledge, and Apache HttpClient 5.6
 * (classic, blocking) on HTTP/1.1, and Mailroom's own {@code HttpMailTransport} as the service
 * builds it (its JSON adapter and classification on top of its client), each sending the same ~3 KB email JSON as {@code POST /v1/emails}
 * with a fresh {@code Idempotency-Key} to a loopback stub in another JVM ({@link HttpClientsStubMain}),
 * which answers at once.
 *
 * <p>Per client and concurrency: a new client with its pool sized to the concurrency, a warm-up, then
 * the measured requests from {@code concurrency} virtual threads (as the dispatcher's handlers
 * send); printed are requests/s, this JVM's CPU per request (process CPU time over the measured
 * window from the OperatingSystemMXBean, so everything the client does on any thread counts, the
 * driving threads too, which are the same for all), the TCP connections the stub accepted for that
 * client (warm-up included) and in the measured window alone, and the HTTP version the requests
 * arrived in. Rounds interleave the clients so that none profits alone from a quiet moment or a
 * warmer JIT; the summary is the median over the rounds.
 *
 * <pre>java -cp tools/benchmarks/target/classes:$(cat tools/benchmarks/target/classpath.txt) io.mailroom.bench.HttpClients [requests] [warm-up] [rounds] [concurrency,...]</pre>
 */
public final class HttpClients {

    private static final String TOKEN = "bench-token-0123456789";
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(15);

    /** One client under test: sends one email request and returns the status code. */
    interface Client extends AutoCloseable {
        int post(String idempotencyKey) throws Exception;

        @Override
        void close();
    }

    record Variant(String name, String protocol, IntFunction<Client> open) {
    }

    record Run(String variant, int concurrency, int requests, double seconds, long cpuNanos, long connections,
               long connectionsMeasured, long http1, long http2, long failures, double load) {

        double perSecond() {
            return requests / seconds;
        }

        double cpuMicrosPerRequest() {
            return cpuNanos / 1e3 / requests;
        }
    }

    private static final Email EMAIL = email();

    private final URI endpoint;
    private final byte[] body;
    private final String bodyText;

    private HttpClients(URI endpoint) {
        this.endpoint = endpoint;
        this.bodyText = json(EMAIL);
        this.body = bodyText.getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        Logging.configure();
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int warmUp = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        List<Integer> concurrencies = args.length > 3
                ? java.util.Arrays.stream(args[3].split(",")).map(Integer::parseInt).toList() : List.of(8, 32);

        try (ChildJvm stub = ChildJvm.of("http-clients-stub", HttpClientsStubMain.class.getName())
                .jvmOptions(List.of("-Xmx512m", "-XX:+UseParallelGC"))
                .env(Map.of(StubProviderMain.TOKEN_ENV, TOKEN))
                .log(Path.of("target", "http-clients-stub.log")).controlled().start()) {
            int port = Integer.parseInt(stub.expect("READY ").substring(6).trim());
            HttpClients bench = new HttpClients(URI.create("http://127.0.0.1:" + port + JsonMailApiAdapter.PATH));
            System.out.printf("HTTP clients: POST %s of a %,d-byte email JSON to a loopback stub (another JVM, pid %d),%n"
                            + "%,d measured requests after %,d to warm up, per client and concurrency, %d interleaved rounds;%n"
                            + "JDK %s, %d cores, load average %.2f at the start%n%n",
                    JsonMailApiAdapter.PATH, bench.body.length, stub.pid(), requests, warmUp, rounds, Runtime.version(),
                    Runtime.getRuntime().availableProcessors(), LoadAverage.oneMinute());
            List<Variant> variants = bench.variants();
            List<Run> runs = new ArrayList<>();
            System.out.println("round  client                                                          conc  req/s    CPU µs/req  conns (measured)  h1/h2 requests  failures  load");
            for (int round = 1; round <= rounds; round++) {
                for (int concurrency : concurrencies) {
                    for (Variant v : variants) {
                        Run run = bench.measure(stub, v, concurrency, warmUp, requests);
                        runs.add(run);
                        System.out.printf("%5d  %-62s  %4d  %7.0f  %10.1f  %5d (%d)  %7d/%-7d  %8d  %.2f%n", round,
                                v.name() + ", " + v.protocol(), concurrency, run.perSecond(), run.cpuMicrosPerRequest(),
                                run.connections(), run.connectionsMeasured(), run.http1(), run.http2(), run.failures(), run.load());
                    }
                }
            }
            summary(variants, concurrencies, runs);
            stub.send("STOP");
        }
    }

    private static void summary(List<Variant> variants, List<Integer> concurrencies, List<Run> runs) {
        System.out.printf("%nMedian over the rounds:%n%n| client | protocol on the wire | concurrency | requests/s | client CPU µs/request | TCP connections opened | load |%n"
                + "|---|---|---:|---:|---:|---:|---:|%n");
        for (int concurrency : concurrencies) {
            for (Variant v : variants) {
                List<Run> mine = runs.stream().filter(r -> r.variant().equals(v.name() + ", " + v.protocol())
                        && r.concurrency() == concurrency).toList();
                Run any = mine.getFirst();
                String wire = any.http2() > 0 && any.http1() == 0 ? "HTTP/2" : any.http2() == 0 ? "HTTP/1.1"
                        : "mixed (" + any.http1() + " HTTP/1.1, " + any.http2() + " HTTP/2)";
                System.out.printf("| %s | %s | %d | %,.0f | %.1f | %s | %.2f |%n", v.name() + ", " + v.protocol(), wire, concurrency,
                        median(mine.stream().mapToDouble(Run::perSecond).toArray()),
                        median(mine.stream().mapToDouble(Run::cpuMicrosPerRequest).toArray()),
                        mine.stream().map(r -> Long.toString(r.connections())).distinct().reduce((a, b) -> a + "/" + b).orElse(""),
                        median(mine.stream().mapToDouble(Run::load).toArray()));
            }
        }
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        java.util.Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private Run measure(ChildJvm stub, Variant variant, int concurrency, int warmUp, int requests) throws Exception {
        long[] start = count(stub);
        try (Client client = variant.open().apply(concurrency)) {
            drive(client, concurrency, warmUp, "w");
            long[] before = count(stub);
            var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            long failures = drive(client, concurrency, requests, "m");
            long t1 = System.nanoTime();
            long cpu1 = os.getProcessCpuTime();
            long[] after = count(stub);
            return new Run(variant.name() + ", " + variant.protocol(), concurrency, requests, (t1 - t0) / 1e9, cpu1 - cpu0,
                    after[0] - start[0], after[0] - before[0], after[1] - before[1], after[2] - before[2], failures,
                    LoadAverage.oneMinute());
        }
    }

    /** {@code total} requests from {@code concurrency} virtual threads; returns how many did not get a 200. */
    private long drive(Client client, int concurrency, int total, String prefix) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        LongAdder failures = new LongAdder();
        Map<String, Integer> firstErrors = new ConcurrentHashMap<>();
        long base = KEYS.getAndAdd(total);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < concurrency; t++) {
                threads.submit(() -> {
                    int i;
                    while ((i = next.getAndIncrement()) < total) {
                        try {
                            int status = client.post(prefix + "-" + (base + i));
                            if (status != 200) {
                                failures.increment();
                                firstErrors.merge("HTTP " + status, 1, Integer::sum);
                            }
                        } catch (Exception e) {
                            failures.increment();
                            firstErrors.merge(e.toString(), 1, Integer::sum);
                        }
                    }
                });
            }
            threads.shutdown();
            if (!threads.awaitTermination(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("requests still running after 10 minutes");
            }
        }
        if (!firstErrors.isEmpty()) {
            System.err.println("failures: " + firstErrors.entrySet().stream().limit(5).map(Entry::toString).toList());
        }
        return failures.sum();
    }

    private static final AtomicLong KEYS = new AtomicLong();

    /** The stub's counters: accepted connections, HTTP/1.1 requests, HTTP/2 requests, refused. */
    private static long[] count(ChildJvm stub) throws Exception {
        stub.send("COUNT");
        String[] f = stub.expect("COUNT ").split(" ");
        return new long[] {Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4])};
    }

    private List<Variant> variants() {
        return List.of(
                new Variant("JDK HttpClient", "HTTP/1.1", c -> jdk(HttpClient.Version.HTTP_1_1)),
                new Variant("JDK HttpClient", "HTTP/2 (h2c Upgrade)", c -> jdk(HttpClient.Version.HTTP_2)),
                new Variant("Jetty 12.1 HttpClient", "HTTP/1.1", c -> jetty(c, false)),
                new Variant("Jetty 12.1 HttpClient", "HTTP/2 (h2c prior knowledge)", c -> jetty(c, true)),
                new Variant("Apache HttpClient 5.6 classic", "HTTP/1.1", this::apache),
                new Variant("Mailroom HttpMailTransport", "auto (HTTP/1.1 in cleartext)", c -> transport(c, HttpMailConfig.Version.AUTO)),
                new Variant("Mailroom HttpMailTransport", "MAILROOM_HTTP_VERSION=2 (h2c)", c -> transport(c, HttpMailConfig.Version.HTTP_2)));
    }

    /** The product's transport as the service builds it (pool sized to the concurrency), with its adapter and classification. */
    private Client transport(int concurrency, HttpMailConfig.Version version) {
        String base = endpoint.toString().substring(0, endpoint.toString().length() - JsonMailApiAdapter.PATH.length());
        HttpMailTransport transport = new HttpMailTransport(HttpMailConfig.of(URI.create(base), TOKEN).withVersion(version)
                .withPoolSize(concurrency));
        return new Client() {
            @Override
            public int post(String key) {
                SendResult result = transport.send(EMAIL, key);
                if (result instanceof SendResult.Sent) {
                    return 200;
                }
                throw new IllegalStateException(result.toString());
            }

            @Override
            public void close() {
                transport.close();
            }
        };
    }

    /** As {@code HttpMailTransport} builds it: no redirects, the connect timeout, a request timeout on each request. */
    private Client jdk(HttpClient.Version version) {
        HttpClient client = HttpClient.newBuilder().version(version).connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER).build();
        return new Client() {
            @Override
            public int post(String key) throws Exception {
                HttpRequest request = HttpRequest.newBuilder(endpoint)
                        .header("Authorization", "Bearer " + TOKEN)
                        .header("Idempotency-Key", key)
                        .header("Content-Type", "application/json")
                        .header("Accept", "application/json")
                        .timeout(REQUEST_TIMEOUT)
                        .POST(HttpRequest.BodyPublishers.ofString(bodyText))
                        .build();
                HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
                return response.statusCode();
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    private Client jetty(int concurrency, boolean http2) {
        org.eclipse.jetty.client.HttpClient client = new org.eclipse.jetty.client.HttpClient(
                http2 ? new HttpClientTransportOverHTTP2(new HTTP2Client()) : new HttpClientTransportOverHTTP());
        // HTTP/2: one connection carries every concurrent request (the stub allows 256 streams)
        client.setMaxConnectionsPerDestination(http2 ? 1 : concurrency);
        client.setConnectTimeout(CONNECT_TIMEOUT.toMillis());
        client.setFollowRedirects(false);
        client.setUserAgentField(null);
        try {
            client.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the Jetty client", e);
        }
        return new Client() {
            @Override
            public int post(String key) throws Exception {
                ContentResponse response = client.POST(endpoint)
                        .headers(h -> h.put(HttpHeader.AUTHORIZATION, "Bearer " + TOKEN)
                                .put("Idempotency-Key", key)
                                .put(HttpHeader.ACCEPT, "application/json"))
                        .body(new BytesRequestContent("application/json", body))
                        .timeout(REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                        .send();
                response.getContentAsString();
                return response.getStatus();
            }

            @Override
            public void close() {
                try {
                    client.stop();
                } catch (Exception e) {
                    throw new IllegalStateException("cannot stop the Jetty client", e);
                }
            }
        };
    }

    private Client apache(int concurrency) {
        PoolingHttpClientConnectionManager pool = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnPerRoute(concurrency).setMaxConnTotal(concurrency)
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setConnectTimeout(Timeout.of(CONNECT_TIMEOUT)).setSocketTimeout(Timeout.of(REQUEST_TIMEOUT)).build())
                .build();
        CloseableHttpClient client = org.apache.hc.client5.http.impl.classic.HttpClients.custom()
                .setConnectionManager(pool)
                .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(Timeout.of(REQUEST_TIMEOUT)).build())
                .disableRedirectHandling().disableAutomaticRetries().disableCookieManagement().disableAuthCaching()
                .disableContentCompression()
                .build();
        return new Client() {
            @Override
            public int post(String key) throws Exception {
                org.apache.hc.client5.http.classic.methods.HttpPost post = new org.apache.hc.client5.http.classic.methods.HttpPost(endpoint);
                post.setHeader("Authorization", "Bearer " + TOKEN);
                post.setHeader("Idempotency-Key", key);
                post.setHeader("Accept", "application/json");
                post.setEntity(new ByteArrayEntity(body, ContentType.APPLICATION_JSON));
                return client.execute(post, response -> {
                    EntityUtils.toString(response.getEntity(), StandardCharsets.UTF_8);
                    return response.getCode();
                });
            }

            @Override
            public void close() {
                client.close(org.apache.hc.core5.io.CloseMode.GRACEFUL);
            }
        };
    }

    /** An order confirmation of eight lines: text and HTML parts, about 3 KB as the JSON adapter sends it. */
    static Email email() {
        StringBuilder text = new StringBuilder("Hello Nguyễn Thị Ánh,\n\nThank you for your order 2026-118734.\n\n");
        StringBuilder html = new StringBuilder("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Your order</title></head>"
                + "<body style=\"margin:0;padding:0;background:#f4f4f4\"><table role=\"presentation\" width=\"100%\" "
                + "style=\"border-collapse:collapse\"><tr><td style=\"padding:24px;font-family:Arial,sans-serif\">"
                + "<h1 style=\"font-size:20px;color:#222\">Thank you for your order</h1><p style=\"color:#444\">Hello Nguyễn Thị Ánh,</p>"
                + "<table style=\"width:100%;border-collapse:collapse\">");
        for (int line = 1; line <= 8; line++) {
            text.append(" - Item ").append(line).append(": Ceramic mug, blue, 350 ml  x").append(line).append("  ").append(12 * line)
                    .append(".90 EUR\n");
            html.append("<tr><td style=\"padding:4px 8px;border-bottom:1px solid #ddd\">Ceramic mug, blue, 350 ml</td>"
                    + "<td style=\"padding:4px 8px;text-align:right\">").append(line).append("</td><td style=\"padding:4px 8px;"
                    + "text-align:right\">").append(12 * line).append(".90&nbsp;EUR</td></tr>");
        }
        text.append("\nTotal: 436.20 EUR\n\nWe will email you again when it ships.\n\nExample Shop, 1 Market Street, Springfield\n");
        html.append("</table><p style=\"font-weight:bold\">Total: 436.20&nbsp;EUR</p><p style=\"color:#666;font-size:12px\">"
                + "Example Shop, 1 Market Street, Springfield</p></td></tr></table></body></html>");
        return new Email(new EmailAddress("orders@shop.example", "Example Shop"),
                new EmailAddress("nguyen.thi.anh@customer.example", "Nguyễn Thị Ánh"), "Your order 2026-118734 is confirmed",
                text.toString(), html.toString(), Map.of("Auto-Submitted", "auto-generated"), "order_confirmation@bench",
                new EmailAddress("help@shop.example", null));
    }

    /** {@code email} as {@link JsonMailApiAdapter} writes it. */
    static String json(Email email) {
        JsonMapper json = JsonMapper.builder().build();
        ObjectNode root = json.createObjectNode();
        root.putObject("from").put("email", email.from().address()).put("name", email.from().displayName());
        root.putArray("to").addObject().put("email", email.to().address()).put("name", email.to().displayName());
        root.putObject("reply_to").put("email", email.replyTo().address());
        root.put("subject", email.subject());
        root.put("text", email.textBody());
        root.put("html", email.htmlBody());
        ObjectNode headers = root.putObject("headers");
        email.headers().forEach(headers::put);
        return root.toString();
    }
}
