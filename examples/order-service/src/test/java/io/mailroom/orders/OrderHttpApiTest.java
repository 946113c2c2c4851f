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
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.BindException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.orders.jooq.Tables.ORDER_LINE;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The HTTP API through a real HTTP client against a server on a free port, over a real migrated
 * PostgreSQL. Every error case also checks that nothing was written.
 */
class OrderHttpApiTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final OrderApiExtension api = new OrderApiExtension(pg);


    @Test
    void postingAnOrderAnswers201AndWritesTheOrderAndItsConfirmation() throws Exception {
        Counts before = counts();

        HttpResponse<String> response = post(OrderFixtures.SAMPLE_JSON, "application/json");

        assertThat(response.statusCode()).isEqualTo(201);
        assertThat(response.headers().firstValue("Content-Type")).get().asString().startsWith("application/json");
        JsonNode body = json(response);
        long id = body.get("orderId").asLong();
        assertThat(id).isPositive();
        assertThat(body.get("idempotencyKey").asText()).isEqualTo("email-order-" + id);
        assertThat(response.headers().firstValue("Location")).contains("/orders/" + id);

        assertThat(counts()).isEqualTo(new Counts(before.orders() + 1, before.lines() + 2, before.messages() + 1,
                before.effects() + 1));
        assertThat(pg.dsl().fetchExists(ORDERS, ORDERS.ID.eq(id))).isTrue();
        var message = pg.dsl().selectFrom(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-order-" + id)).fetchSingle();
        assertThat(message.getStatus()).isEqualTo("pending");
        assertThat(message.getTopic()).isEqualTo(OrderService.TOPIC);

        HttpResponse<String> fetched = get(response.headers().firstValue("Location").orElseThrow());
        assertThat(fetched.statusCode()).isEqualTo(200);
        JsonNode order = json(fetched);
        assertThat(order.get("orderId").asLong()).isEqualTo(id);
        assertThat(order.get("customerEmail").asText()).isEqualTo("ada@example.com");
        assertThat(order.get("total").asText()).isEqualTo("18.50");
        assertThat(order.get("lines")).hasSize(2);
        assertThat(order.get("lines").get(1).get("lineTotal").asText()).isEqualTo("10.00");
    }

    @Test
    void charsetUtf8IsAccepted() throws Exception {
        HttpResponse<String> response = post(OrderFixtures.SAMPLE_JSON, "application/json; charset=UTF-8");
        assertThat(response.statusCode()).isEqualTo(201);
    }

    static Stream<Arguments> invalidBodies() {
        return Stream.of(
                Arguments.of("missing email", sample(o -> o.remove("customerEmail")), "customerEmail"),
                Arguments.of("null email", sample(o -> o.putNull("customerEmail")), "customerEmail"),
                Arguments.of("invalid email", sample(o -> o.put("customerEmail", "ada.example.com")), "customerEmail"),
                Arguments.of("email with CR/LF", sample(o -> o.put("customerEmail", "ada@example.com\r\nBcc: x@example.com")),
                        "customerEmail"),
                Arguments.of("blank name", sample(o -> o.put("customerName", " ")), "customerName"),
                // the renderer refuses these for good; the API must refuse them before anything is written
                Arguments.of("bidi override in the name", sample(o -> o.put("customerName", "Ann \u202Emoc.live")),
                        "customerName"),
                Arguments.of("bidi isolate in the name", sample(o -> o.put("customerName", "Ann \u2067x")), "customerName"),
                Arguments.of("line separator in the name", sample(o -> o.put("customerName", "Ann\u2028Lee")), "customerName"),
                Arguments.of("address of 255 characters", sample(o -> o.put("customerEmail", OrderFixtures.address(255))), "customerEmail"),
                Arguments.of("bidi override in a line name", sample(o -> line(o, 0).put("name", "Mug \u202Egnp.exe")),
                        "lines[0].name"),
                Arguments.of("negative unit price", sample(o -> line(o, 1).put("unitPrice", -1)), "lines[1].unitPrice"),
                Arguments.of("three decimals", sample(o -> line(o, 0).put("unitPrice", 4.255)), "lines[0].unitPrice"),
                Arguments.of("zero quantity", sample(o -> line(o, 0).put("quantity", 0)), "lines[0].quantity"),
                Arguments.of("empty lines", sample(o -> o.putArray("lines")), "lines"),
                Arguments.of("bad currency", sample(o -> o.put("currency", "euro")), "currency"),
                Arguments.of("wrong type", sample(o -> line(o, 0).put("quantity", "two")), "lines[0].quantity"),
                Arguments.of("number as string", sample(o -> line(o, 0).put("unitPrice", "4.25")), "lines[0].unitPrice"),
                Arguments.of("unknown field", sample(o -> o.put("total", "0.01")), "total"),
                Arguments.of("malformed JSON", "{\"customerEmail\": \"ada@example.com\",", "body"),
                Arguments.of("empty body", "", "body"),
                Arguments.of("array body", "[" + OrderFixtures.SAMPLE_JSON + "]", "body"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidBodies")
    void invalidInputAnswers400NamingTheFieldAndWritesNothing(String description, String body, String field)
            throws Exception {
        Counts before = counts();

        HttpResponse<String> response = post(body, "application/json");

        assertThat(response.statusCode()).isEqualTo(400);
        assertError(response, field);
        assertThat(counts()).isEqualTo(before);
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/plain", "application/x-www-form-urlencoded", "application/json; charset=ISO-8859-1",
            "application/jsonp"})
    void nonJsonContentTypeAnswers415AndWritesNothing(String contentType) throws Exception {
        Counts before = counts();

        HttpResponse<String> response = post(OrderFixtures.SAMPLE_JSON, contentType);

        assertThat(response.statusCode()).isEqualTo(415);
        assertError(response, "Content-Type");
        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void missingContentTypeAnswers415() throws Exception {
        HttpResponse<String> response = api.http().send(HttpRequest.newBuilder(uri("/orders"))
                .POST(HttpRequest.BodyPublishers.ofString(OrderFixtures.SAMPLE_JSON)).build(), utf8());
        assertThat(response.statusCode()).isEqualTo(415);
        assertError(response, "Content-Type");
    }

    @Test
    void bodyOverTheLimitAnswers413AndWritesNothing() throws Exception {
        Counts before = counts();
        String padded = sample(o -> o.put("customerName", "x".repeat(HttpSettings.DEFAULT_MAX_BODY_BYTES)));

        // Expect: 100-continue, as a client sending a large body should: a server that refuses it
        // early and closes can otherwise reset the connection under the body still being written,
        // and the client loses the answer (seen once as "header parser received no bytes")
        HttpResponse<String> withLength = api.http().send(HttpRequest.newBuilder(uri("/orders")).expectContinue(true)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(padded, StandardCharsets.UTF_8)).build(), utf8());
        assertThat(withLength.statusCode()).isEqualTo(413);
        assertError(withLength, "body");

        // without Content-Length (chunked), the limit holds while reading
        byte[] bytes = padded.getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> chunked = api.http().send(HttpRequest.newBuilder(uri("/orders")).expectContinue(true)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes))).build(), utf8());
        assertThat(chunked.statusCode()).isEqualTo(413);
        assertError(chunked, "body");

        assertThat(counts()).isEqualTo(before);
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "0", "-1", "1.5", "99999999999999999999", "9223372036854775808"})
    void getWithAnIdThatIsNoPositiveIntegerAnswers400(String id) throws Exception {
        HttpResponse<String> response = get("/orders/" + id);
        assertThat(response.statusCode()).isEqualTo(400);
        assertError(response, "id");
    }

    @Test
    void getOfAnAbsentOrderAnswers404() throws Exception {
        HttpResponse<String> response = get("/orders/" + Long.MAX_VALUE);
        assertThat(response.statusCode()).isEqualTo(404);
        assertError(response, "id");
    }

    @Test
    void unknownPathsAndMethodsAnswerInJsonToo() throws Exception {
        HttpResponse<String> unknown = get("/nope");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(json(unknown).get("error").asText()).isNotBlank();
        HttpResponse<String> wrongMethod = api.http().send(HttpRequest.newBuilder(uri("/orders"))
                .PUT(HttpRequest.BodyPublishers.ofString(OrderFixtures.SAMPLE_JSON)).build(), utf8());
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(json(wrongMethod).get("error").asText()).isNotBlank();
    }

    @Test
    void healthEndpoints() throws Exception {
        HttpResponse<String> live = get("/health/live");
        assertThat(live.statusCode()).isEqualTo(200);
        assertThat(json(live).get("status").asText()).isEqualTo("UP");
        HttpResponse<String> ready = get("/health/ready");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(json(ready).get("status").asText()).isEqualTo("UP");
    }

    @Test
    void withoutADatabaseTheServiceIsLiveButNotReadyAndRefusesOrdersWith503() throws Exception {
        PGSimpleDataSource nowhere = new PGSimpleDataSource();
        nowhere.setServerNames(new String[] {"127.0.0.1"});
        nowhere.setPortNumbers(new int[] {1}); // nothing listens on port 1
        nowhere.setDatabaseName("none");
        nowhere.setConnectTimeout(2);
        try (OrderServer down = OrderServer.start(nowhere, HttpSettings.of("127.0.0.1", 0))) {
            HttpResponse<String> live = api.http().send(HttpRequest.newBuilder(down.baseUri().resolve("/health/live")).build(), utf8());
            assertThat(live.statusCode()).isEqualTo(200);
            HttpResponse<String> ready = api.http().send(HttpRequest.newBuilder(down.baseUri().resolve("/health/ready")).build(), utf8());
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(json(ready).get("status").asText()).isEqualTo("DOWN");
            HttpResponse<String> post = api.http().send(HttpRequest.newBuilder(down.baseUri().resolve("/orders"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(OrderFixtures.SAMPLE_JSON)).build(), utf8());
            assertThat(post.statusCode()).isEqualTo(503);
            assertThat(json(post).get("error").asText()).isNotBlank();
        }
    }

    @Test
    void startingOnATakenPortFailsWithoutDisturbingTheRunningServer() throws Exception {
        assertThatThrownBy(() -> OrderServer.start(pg.dataSource(), HttpSettings.of("127.0.0.1", api.server().port())))
                .hasRootCauseInstanceOf(BindException.class);
        assertThat(get("/health/live").statusCode()).isEqualTo(200);
    }

    // --- helpers ---

    private static String sample(Consumer<ObjectNode> change) {
        try {
            ObjectNode order = (ObjectNode) OrderJson.mapper().readTree(OrderFixtures.SAMPLE_JSON);
            change.accept(order);
            return OrderJson.mapper().writeValueAsString(order);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode line(ObjectNode order, int index) {
        return (ObjectNode) ((ArrayNode) order.get("lines")).get(index);
    }

    private static URI uri(String path) {
        return api.server().baseUri().resolve(path);
    }

    private static HttpResponse.BodyHandler<String> utf8() {
        return HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8);
    }

    private static HttpResponse<String> post(String body, String contentType) throws IOException, InterruptedException {
        return api.http().send(HttpRequest.newBuilder(uri("/orders"))
                .header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build(), utf8());
    }

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return api.http().send(HttpRequest.newBuilder(uri(path)).GET().build(), utf8());
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

    private record Counts(int orders, int lines, int messages, int effects) {
    }

    private static Counts counts() {
        DSLContext dsl = pg.dsl();
        return new Counts(dsl.fetchCount(ORDERS), dsl.fetchCount(ORDER_LINE), dsl.fetchCount(OUTBOX_MESSAGE),
                dsl.fetchCount(OUTBOX_EFFECT));
    }
}
