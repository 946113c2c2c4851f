package io.mailroom.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.mailroom.email.transport.http.JsonMailApiAdapter;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The loopback mail provider of scenarios 3 and 5, in a process of its own: the JSON API the HTTP
 * transport speaks ({@code POST /v1/emails}, {@code Authorization: Bearer}, {@code Idempotency-Key};
 * see {@link JsonMailApiAdapter}) reduced to accepting and counting. A request with the right token,
 * a key and a body is accepted and answered {@code 200 {"id":"stub-<key>"}}; a repeated key gets the
 * same answer, as from a provider that deduplicates, and is counted as a second acceptance so the
 * benchmark sees it. A key beginning {@value #AMBIGUOUS_PREFIX} gets no answer for
 * {@value #SILENCE_MILLIS} ms (then a 500), so a dispatcher whose request timeout is shorter cannot
 * know whether it was sent: its email ends in review once the key window has passed (the memory
 * scenario's review backlog); it is counted as refused. Anything else is refused (401, 400, 405) and counted as refused. It neither
 * parses nor keeps the email: its CPU per request should be small beside the dispatcher's.
 *
 * <p>Argument: the loopback port (0 or none: any free one); token in {@code $BENCH_STUB_TOKEN}. Talks
 * with the parent as {@link Acceptances} describes.
 */
public final class StubProviderMain {

    static final String TOKEN_ENV = "BENCH_STUB_TOKEN";
    /** Keys with this prefix get no answer in time: the send is ambiguous. */
    static final String AMBIGUOUS_PREFIX = "bench-ambiguous-";
    static final long SILENCE_MILLIS = 2_000;

    private final String authorization;
    private final Acceptances acceptances = new Acceptances();

    private StubProviderMain(String token) {
        this.authorization = "Bearer " + token;
    }

    public static void main(String[] args) throws Exception {
        Logging.configure();
        String token = System.getenv(TOKEN_ENV);
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("the stub provider needs its bearer token in $" + TOKEN_ENV);
        }
        StubProviderMain stub = new StubProviderMain(token);
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
        server.setExecutor(threads);
        server.createContext(JsonMailApiAdapter.PATH, stub::emails);
        server.start();
        try {
            stub.acceptances.serve(server.getAddress().getPort());
        } finally {
            server.stop(0);
            threads.shutdownNow();
        }
    }

    private void emails(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body;
            try (InputStream in = ex.getRequestBody()) {
                body = in.readAllBytes();
            }
            if (!ex.getRequestMethod().equals("POST")) {
                acceptances.refuse();
                answer(ex, 405, "{\"message\":\"POST only\"}");
                return;
            }
            if (!authorization.equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                acceptances.refuse();
                answer(ex, 401, "{\"message\":\"invalid token\"}");
                return;
            }
            String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
            if (key == null || key.isBlank() || body.length == 0) {
                acceptances.refuse();
                answer(ex, 400, "{\"message\":\"Idempotency-Key header and a body are required\"}");
                return;
            }
            if (key.startsWith(AMBIGUOUS_PREFIX)) {
                acceptances.refuse();
                try {
                    Thread.sleep(SILENCE_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                answer(ex, 500, "{\"message\":\"internal error (benchmark: an ambiguous answer)\"}");
                return;
            }
            acceptances.accept(key);
            answer(ex, 200, "{\"id\":\"stub-" + key + "\"}");
        }
    }

    private static void answer(HttpExchange ex, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }
}
