package io.mailroom.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback mail provider that behaves like the HTTP APIs Mailroom talks to ({@code POST /v1/emails}
 * with {@code Authorization: Bearer} and {@code Idempotency-Key}) and misbehaves on purpose.
 *
 * <p>Idempotency like a real provider: the first request of a key that gets processed stores its
 * answer; a later request with the same key (within {@code keyWindow}) gets the same answer and is
 * no new effect; the same key with a different body is refused with 422. Failed requests (500,
 * 429, 503) store nothing, so a retry is processed afresh.
 *
 * <p>Faults, drawn from a seeded {@link Random} per request: {@code p500} answers 500,
 * {@code p429} answers 429 with a {@code Retry-After} of 1..4 s, {@code pHang} accepts the email
 * (stores and records it) and then holds the answer for {@code hang} (longer than the client's
 * timeout), so the sender cannot know it went out. {@code POST /control/outage?millis=N} starts an
 * outage: every request answers 503 until it ends; {@code POST /control/hang?p=P} changes
 * {@code pHang} from then on (a run that measures latency first, then wants slow answers).
 *
 * <p>Every request is appended to the record file before it is answered, one line each (see
 * {@link ProviderRecord}); the file is written with unbuffered appends, so a line written is a line
 * kept even if this process is killed. The dispatchers never see the file.
 */
public final class ProviderStub implements AutoCloseable {

    public static final String PATH = "/v1/emails";

    /** Fault rates and behaviour; rates are probabilities per request. */
    public record Settings(int port, String token, long seed, double p500, double p429, double pHang, Duration hang,
                           Duration keyWindow, Path record) {
        public Settings {
            if (p500 < 0 || p429 < 0 || pHang < 0 || p500 + p429 + pHang > 1) {
                throw new IllegalArgumentException("fault rates must be >= 0 and sum to at most 1");
            }
        }

        /** No faults: every request is accepted (tests that want a well-behaved provider). */
        public static Settings wellBehaved(String token, Path record) {
            return new Settings(0, token, 1, 0, 0, 0, Duration.ofSeconds(5), Duration.ofDays(1), record);
        }
    }

    private record Stored(String providerId, String fingerprint, long acceptedAtMillis) {
    }

    private final Settings settings;
    private final HttpServer server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final JsonMapper json = JsonMapper.builder().build();
    private final Map<String, Stored> byKey = new HashMap<>();
    private final Random random;
    private final AtomicLong ids = new AtomicLong();
    private final RecordWriter record;
    private volatile long outageUntilMillis;
    private volatile double pHang;

    private ProviderStub(Settings settings) throws IOException {
        this.settings = settings;
        this.random = new Random(settings.seed());
        this.pHang = settings.pHang();
        this.record = new RecordWriter(settings.record());
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), settings.port()), 200);
        server.setExecutor(threads);
        server.createContext(PATH, this::emails);
        server.createContext("/control/outage", this::outage);
        server.createContext("/control/hang", this::hang);
        server.createContext("/control/live", ex -> answer(ex, 200, "{\"status\":\"UP\"}", null));
        server.start();
    }

    public static ProviderStub start(Settings settings) throws IOException {
        return new ProviderStub(settings);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port();
    }

    /** Starts an outage of {@code length} from now (503 to every request). */
    public void outage(Duration length) {
        outageUntilMillis = System.currentTimeMillis() + length.toMillis();
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
        record.close();
    }

    // ------------------------------------------------------------------------------------ handlers

    private void emails(HttpExchange ex) throws IOException {
        try (ex) {
            if (!ex.getRequestMethod().equals("POST")) {
                answer(ex, 405, "{\"message\":\"POST only\"}", null);
                return;
            }
            byte[] body;
            try (InputStream in = ex.getRequestBody()) {
                body = in.readAllBytes();
            }
            String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
            if (!authorized(ex.getRequestHeaders().getFirst("Authorization"))) {
                write(key, "unauthorized", null, null, null);
                answer(ex, 401, "{\"message\":\"invalid token\"}", null);
                return;
            }
            if (key == null || key.isBlank()) {
                write(null, "bad-request", null, null, null);
                answer(ex, 400, "{\"message\":\"Idempotency-Key header is required\"}", null);
                return;
            }
            String recipient = recipient(body);
            if (recipient == null) {
                write(key, "bad-request", null, null, null);
                answer(ex, 400, "{\"message\":\"to[0].email is required\"}", null);
                return;
            }
            String fingerprint = sha256(body);
            if (System.currentTimeMillis() < outageUntilMillis) {
                write(key, "outage-503", null, fingerprint, recipient);
                answer(ex, 503, "{\"message\":\"service unavailable\"}", null);
                return;
            }
            double draw;
            int retryAfter;
            synchronized (random) {
                draw = random.nextDouble();
                retryAfter = 1 + random.nextInt(4);
            }
            if (draw < settings.p500()) {
                write(key, "fault-500", null, fingerprint, recipient);
                answer(ex, 500, "{\"message\":\"internal error\"}", null);
                return;
            }
            if (draw < settings.p500() + settings.p429()) {
                write(key, "fault-429", null, fingerprint, recipient);
                answer(ex, 429, "{\"message\":\"slow down\"}", Integer.toString(retryAfter));
                return;
            }
            boolean hang = draw < settings.p500() + settings.p429() + pHang;
            Stored stored;
            String kind;
            synchronized (byKey) {
                Stored previous = byKey.get(key);
                long now = System.currentTimeMillis();
                if (previous != null && now - previous.acceptedAtMillis() > settings.keyWindow().toMillis()) {
                    previous = null; // the provider has forgotten the key: a new request is a new effect
                }
                if (previous != null && !previous.fingerprint().equals(fingerprint)) {
                    write(key, "key-mismatch", previous.providerId(), fingerprint, recipient);
                    answer(ex, 422, "{\"message\":\"idempotency key reused with a different request\"}", null);
                    return;
                }
                if (previous != null) {
                    stored = previous;
                    kind = hang ? "replayed-hung" : "replayed";
                } else {
                    stored = new Stored("prov-" + ids.incrementAndGet(), fingerprint, now);
                    byKey.put(key, stored);
                    kind = hang ? "accepted-hung" : "accepted";
                }
                // Recorded under the lock, so the record's order of effects per key is the true one.
                write(key, kind, stored.providerId(), fingerprint, recipient);
            }
            if (hang) {
                try {
                    Thread.sleep(settings.hang().toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            answer(ex, 200, "{\"id\":\"" + stored.providerId() + "\"}", null);
        } catch (IOException e) {
            // The client went away (it timed out on a held answer): nothing more to do.
        }
    }

    private void outage(HttpExchange ex) throws IOException {
        try (ex) {
            String query = ex.getRequestURI().getQuery();
            long millis = query != null && query.startsWith("millis=") ? Long.parseLong(query.substring(7)) : 0;
            outage(Duration.ofMillis(millis));
            write(null, "outage-start", null, Long.toString(millis), null);
            answer(ex, 200, "{\"outageMillis\":" + millis + "}", null);
        }
    }

    private void hang(HttpExchange ex) throws IOException {
        try (ex) {
            String query = ex.getRequestURI().getQuery();
            double p;
            try {
                p = Double.parseDouble(query != null && query.startsWith("p=") ? query.substring(2) : "");
            } catch (NumberFormatException e) {
                answer(ex, 400, "{\"message\":\"p must be a number: /control/hang?p=0.5\"}", null);
                return;
            }
            if (p < 0 || settings.p500() + settings.p429() + p > 1) {
                answer(ex, 400, "{\"message\":\"p must be >= 0 and, with p500 and p429, at most 1\"}", null);
                return;
            }
            pHang = p;
            answer(ex, 200, "{\"pHang\":" + p + "}", null);
        }
    }

    // ------------------------------------------------------------------------------------- helpers

    /** Compares the bearer token in constant time, so response timing tells nothing about it. */
    private boolean authorized(String header) {
        if (header == null || !header.startsWith("Bearer ")) {
            return false;
        }
        return MessageDigest.isEqual(header.substring(7).getBytes(StandardCharsets.UTF_8),
                settings.token().getBytes(StandardCharsets.UTF_8));
    }

    private String recipient(byte[] body) {
        try {
            JsonNode to = json.readTree(body).path("to").path(0).path("email");
            return to.isTextual() && !to.textValue().isBlank() ? to.textValue() : null;
        } catch (IOException e) {
            return null;
        }
    }

    private void write(String key, String kind, String providerId, String fingerprint, String recipient) {
        record.append(System.currentTimeMillis(), key, kind, providerId, fingerprint, recipient);
    }

    private static void answer(HttpExchange ex, int status, String body, String retryAfter) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        if (retryAfter != null) {
            ex.getResponseHeaders().set("Retry-After", retryAfter);
        }
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------------------------------- main

    /**
     * {@code ProviderStub --record FILE --port-file FILE [--token T, else $CHAOS_PROVIDER_TOKEN] [--seed N] [--p500 0.05] [--p429 0.01]
     * [--p-hang 0.02] [--hang 3s] [--key-window 24h] [--port 0]}: runs until killed.
     */
    public static void main(String[] args) throws Exception {
        Args a = Args.parse(args);
        String token = a.has("token") ? a.required("token") : System.getenv(ChaosRun.TOKEN_ENV);
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("the token is required: --token T or $" + ChaosRun.TOKEN_ENV);
        }
        Settings settings = new Settings(a.integer("port", 0), token, a.longValue("seed", 1),
                a.decimal("p500", 0.05), a.decimal("p429", 0.01), a.decimal("p-hang", 0.02),
                a.duration("hang", Duration.ofSeconds(3)), a.duration("key-window", Duration.ofDays(1)),
                Path.of(a.required("record")));
        ProviderStub stub = start(settings);
        Runtime.getRuntime().addShutdownHook(new Thread(stub::close, "provider-stub-stop"));
        // Written last, so the port file appearing means "listening".
        Path portFile = Path.of(a.required("port-file"));
        Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
        Files.writeString(tmp, Integer.toString(stub.port()));
        Files.move(tmp, portFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        System.out.println("provider stub listening on " + stub.baseUrl());
        Thread.currentThread().join();
    }
}
