package io.mailroom.orders;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /orders} with an {@code Idempotency-Key} header, through a real HTTP client against
 * the server over a real migrated PostgreSQL: a repeat gets the first answer back and creates
 * nothing, a different request under the same key gets 422, concurrent repeats make one order.
 */
class IdempotencyKeyHttpTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final OrderApiExtension api = new OrderApiExtension(pg);


    @Test
    void aRepeatWithTheSameKeyGetsTheFirstAnswerAndCreatesNothing() throws Exception {
        String key = newKey();
        Counts before = counts();

        HttpResponse<String> first = post(OrderFixtures.SAMPLE_JSON, key);
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(counts()).isEqualTo(before.plus(1));

        // the same request written differently: other field order, 10 for 10.00, no whitespace
        String same = """
                {"lines":[{"name":"Notebook","sku":"SKU-1","unitPrice":4.250,"quantity":2},\
                {"quantity":1,"sku":"SKU-2","name":"Pen set","unitPrice":10.00}],\
                "currency":"EUR","customerName":"Ada Lovelace","customerEmail":"ada@example.com"}""";
        HttpResponse<String> repeat = post(same, key);

        assertThat(repeat.statusCode()).isEqualTo(201);
        assertThat(repeat.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(json(repeat)).isEqualTo(json(first));
        assertThat(repeat.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(counts()).as("no second order, no second email").isEqualTo(before.plus(1));

        // and again, long after: still the same order
        assertThat(json(post(OrderFixtures.SAMPLE_JSON, key))).isEqualTo(json(first));
        assertThat(counts()).isEqualTo(before.plus(1));
    }

    @Test
    void theSameKeyWithADifferentRequestAnswers422NamingTheHeaderAndCreatesNothing() throws Exception {
        String key = newKey();
        HttpResponse<String> first = post(OrderFixtures.SAMPLE_JSON, key);
        assertThat(first.statusCode()).isEqualTo(201);
        Counts after = counts();

        ObjectNode other = (ObjectNode) OrderJson.mapper().readTree(OrderFixtures.SAMPLE_JSON);
        ((ObjectNode) ((ArrayNode) other.get("lines")).get(0)).put("quantity", 3);
        HttpResponse<String> reused = post(OrderJson.mapper().writeValueAsString(other), key);

        assertThat(reused.statusCode()).isEqualTo(422);
        assertError(reused, "Idempotency-Key");
        assertThat(reused.headers().firstValue("Location")).isEmpty();
        assertThat(counts()).isEqualTo(after);
    }

    @Test
    void differentKeysMakeDifferentOrdersAndNoKeyKeepsTheOldBehaviour() throws Exception {
        Counts before = counts();
        long a = json(post(OrderFixtures.SAMPLE_JSON, newKey())).get("orderId").asLong();
        long b = json(post(OrderFixtures.SAMPLE_JSON, newKey())).get("orderId").asLong();
        long c = json(post(OrderFixtures.SAMPLE_JSON, null)).get("orderId").asLong();
        long d = json(post(OrderFixtures.SAMPLE_JSON, null)).get("orderId").asLong();
        assertThat(Set.of(a, b, c, d)).hasSize(4);
        assertThat(counts()).isEqualTo(before.plus(4));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "with space", "tab\there", "x"})
    void aBadKeyAnswers400NamingTheHeaderAndWritesNothing(String key) throws Exception {
        String bad = key.equals("x") ? "k".repeat(256) : key;
        Counts before = counts();

        HttpResponse<String> response = post(OrderFixtures.SAMPLE_JSON, bad);

        assertThat(response.statusCode()).as("key '%s'", bad).isEqualTo(400);
        assertError(response, "Idempotency-Key");
        assertThat(counts()).isEqualTo(before);
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc\u0001def", "abc\u007fdef", "abc\u001bdef", "schl\u00fcssel" /* ISO-8859-1 */,
            "schl\u00c3\u00bcssel" /* the UTF-8 bytes of ü */})
    void aKeyWithARawControlOrNonAsciiByteIsRefusedWith400AndWritesNothing(String key) throws Exception {
        // java.net.http will not send these as they are; a raw socket does (one byte per char).
        // Jetty may refuse some of them itself before any route runs; either way: 400, nothing written.
        Counts before = counts();
        byte[] body = OrderFixtures.SAMPLE_JSON.getBytes(StandardCharsets.UTF_8);
        String head = "POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Idempotency-Key: " + key + "\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n";
        String answer;
        try (Socket socket = new Socket("127.0.0.1", api.server().port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
        assertThat(answer).startsWith("HTTP/1.1 400");
        if (answer.contains("\"field\"")) {
            assertThat(answer).contains("\"field\":\"Idempotency-Key\"");
        }
        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void aKeyOf255VisibleCharactersIsFine() throws Exception {
        HttpResponse<String> response = post(OrderFixtures.SAMPLE_JSON, "k".repeat(254) + "~");
        assertThat(response.statusCode()).isEqualTo(201);
    }

    @Test
    void theHeaderTwiceAnswers400() throws Exception {
        Counts before = counts();
        HttpResponse<String> response = api.http().send(HttpRequest.newBuilder(uri("/orders"))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", newKey())
                .header("Idempotency-Key", newKey())
                .POST(HttpRequest.BodyPublishers.ofString(OrderFixtures.SAMPLE_JSON)).build(), utf8());
        assertThat(response.statusCode()).isEqualTo(400);
        assertError(response, "Idempotency-Key");
        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void concurrentRequestsWithOneKeyMakeExactlyOneOrderAndOneOutboxMessage() throws Exception {
        int rounds = 5;
        int clients = 8;
        Counts before = counts();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            for (int round = 0; round < rounds; round++) {
                String key = newKey();
                CountDownLatch go = new CountDownLatch(1);
                List<Future<HttpResponse<String>>> answers = new ArrayList<>();
                for (int i = 0; i < clients; i++) {
                    answers.add(pool.submit(() -> {
                        go.await();
                        return post(OrderFixtures.SAMPLE_JSON, key);
                    }));
                }
                go.countDown();
                Set<String> bodies = new HashSet<>();
                int fresh = 0;
                for (Future<HttpResponse<String>> answer : answers) {
                    HttpResponse<String> response = answer.get(30, TimeUnit.SECONDS);
                    assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
                    bodies.add(json(response).toString());
                    if (response.headers().firstValue("Idempotent-Replayed").isEmpty()) {
                        fresh++;
                    }
                }
                assertThat(bodies).as("every client was told of the same order").hasSize(1);
                assertThat(fresh).as("exactly one answer is not a replay").isEqualTo(1);
                long orderId = OrderJson.mapper().readTree(bodies.iterator().next()).get("orderId").asLong();
                assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-order-" + orderId)))
                        .isEqualTo(1);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(counts()).as("one order and one email per key").isEqualTo(before.plus(rounds));
    }

    // --- helpers ---

    private static String newKey() {
        return UUID.randomUUID().toString();
    }

    private static URI uri(String path) {
        return api.server().baseUri().resolve(path);
    }

    private static HttpResponse.BodyHandler<String> utf8() {
        return HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8);
    }

    private static HttpResponse<String> post(String body, String key) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri("/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return api.http().send(request.build(), utf8());
    }

    private static JsonNode json(HttpResponse<String> response) throws IOException {
        return OrderJson.mapper().readTree(response.body());
    }

    private static void assertError(HttpResponse<String> response, String field) throws IOException {
        assertThat(response.headers().firstValue("Content-Type")).get().asString().startsWith("application/json");
        JsonNode body = json(response);
        assertThat(body.get("field")).as("field in %s", response.body()).isNotNull();
        assertThat(body.get("field").asText()).isEqualTo(field);
        assertThat(body.get("error").asText()).isNotBlank();
    }

    private record Counts(int orders, int messages) {
        Counts plus(int n) {
            return new Counts(orders + n, messages + n);
        }
    }

    private static Counts counts() {
        DSLContext dsl = pg.dsl();
        return new Counts(dsl.fetchCount(ORDERS), dsl.fetchCount(OUTBOX_MESSAGE));
    }
}
