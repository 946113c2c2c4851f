package io.mailroom.orders;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.stream.Stream;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The order service's share of the bad-input catalogue: an order id that does not exist, ids that
 * are not ids, and bodies whose text PostgreSQL could not store as given (NUL, lone surrogates,
 * bytes that are not UTF-8). Each gets a 4xx that names the parameter, writes nothing, and the next
 * good order is placed and read back.
 */
class BadInputCatalogueTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final OrderApiExtension api = new OrderApiExtension(pg);


    @Test
    void anOrderIdThatDoesNotExistAnswers404NamingTheIdAndTheServiceSaysEmpty() throws Exception {
        long missing = pg.dsl().fetchSingle("SELECT coalesce(max(id), 0) + 1000 FROM orders").get(0, Long.class);

        HttpResponse<String> response = get("/orders/" + missing);

        assertThat(response.statusCode()).isEqualTo(404);
        assertField(response, "id");
        assertThat(new OrderService(pg.dsl()).findOrder(missing)).isEmpty();
        assertAGoodOrderStillGoesThrough();
    }

    @ParameterizedTest
    @ValueSource(strings = {"1;DROP%20TABLE%20orders", "1%20OR%201=1", "1'--", "1e3", "0x10", "+1", "%2B1",
            "１２３" /* full-width digits */, "99999999999999999999999999999999"})
    void anIdThatIsNoIdAnswers400NamingTheId(String id) throws Exception {
        HttpResponse<String> response = get("/orders/" + id);

        assertThat(response.statusCode()).as(id).isEqualTo(400);
        assertField(response, "id");
        assertAGoodOrderStillGoesThrough();
    }

    @ParameterizedTest
    @ValueSource(strings = {"..%2F..%2Fetc%2Fpasswd", "../../etc/passwd", "1/../2", "%00", "1%2F2"})
    void aPathTraversalOrAnEncodedNulReachesNoOrderAndNoFile(String id) throws Exception {
        // Some of these Jetty refuses itself (400, its own HTML page) before any route runs.
        HttpResponse<String> response = get("/orders/" + id);

        assertThat(response.statusCode()).as(id).isBetween(400, 404);
        assertThat(response.body()).doesNotContain("root:");
        assertAGoodOrderStillGoesThrough();
    }

    @ParameterizedTest
    @ValueSource(strings = {"%00", "../../etc/passwd"})
    void aRequestJettyRefusesItselfSaysConnectionCloseBeforeTheServerCloses(String id) throws Exception {
        // Jetty answers these itself and closes the connection; the response must say so, or a
        // pooling client sends its next request on the closed connection.
        try (Socket socket = new Socket("127.0.0.1", api.server().port())) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write(("GET /orders/" + id + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            // readAllBytes returns at the server's close (a kept-alive connection would time out instead)
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            String head = response.substring(0, response.indexOf("\r\n\r\n")).toLowerCase(Locale.ROOT);

            assertThat(head).as(id).startsWith("http/1.1 400").contains("\r\nconnection: close");
        }
        assertAGoodOrderStillGoesThrough();
    }

    static Stream<Arguments> unstorableBodies() {
        String good = OrderFixtures.SAMPLE_JSON;
        return Stream.of(
                Arguments.of("a \\u0000 escape in the name", good.replace("\"Ada Lovelace\"", "\"Ann\\u0000Lee\""), "customerName"),
                Arguments.of("a \\u0000 escape in the address", good.replace("\"ada@example.com\"", "\"ada\\u0000@example.com\""), "customerEmail"),
                Arguments.of("a \\u0000 escape in a line's sku", good.replace("\"SKU-2\"", "\"SKU\\u0000-2\""), "lines[1].sku"),
                Arguments.of("a \\u0000 escape in a line's name", good.replace("\"Notebook\"", "\"Note\\u0000book\""), "lines[0].name"),
                Arguments.of("a \\u0000 escape in the currency", good.replace("\"EUR\"", "\"EU\\u0000\""), "currency"),
                Arguments.of("an escaped lone surrogate in the name", good.replace("\"Ada Lovelace\"", "\"Ann\\ud800Lee\""), "customerName"),
                Arguments.of("CR LF in the name", good.replace("\"Ada Lovelace\"", "\"Ann\\r\\nBcc: eve@evil.example\""), "customerName"),
                Arguments.of("CR LF after the address", good.replace("\"ada@example.com\"", "\"ada@example.com\\r\\nBcc: eve@evil.example\""),
                        "customerEmail"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("unstorableBodies")
    void aBodyWhoseTextCannotBeStoredAsGivenAnswers400NamingTheField(String what, String body, String field) throws Exception {
        assertThat(body).as("the fixture was changed").isNotEqualTo(OrderFixtures.SAMPLE_JSON);
        int before = pg.dsl().fetchCount(ORDERS);

        HttpResponse<String> response = post(body.getBytes(StandardCharsets.UTF_8));

        assertThat(response.statusCode()).as(what).isEqualTo(400);
        assertField(response, field);
        assertThat(pg.dsl().fetchCount(ORDERS)).isEqualTo(before);
        assertAGoodOrderStillGoesThrough();
    }

    @Test
    void bytesThatAreNotUtf8Answer400AndWriteNothing() throws Exception {
        byte[] body = OrderFixtures.SAMPLE_JSON.replace("Ada Lovelace", "Ada\u00ffLovelace").getBytes(StandardCharsets.ISO_8859_1);
        int before = pg.dsl().fetchCount(ORDERS);

        HttpResponse<String> response = post(body);

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(pg.dsl().fetchCount(ORDERS)).isEqualTo(before);
        assertAGoodOrderStillGoesThrough();
    }

    @ParameterizedTest
    @ValueSource(strings = {"1;DROP%20TABLE%20orders", "1'--", "0x10", "%2B1", "１２３", "99999999999999999999999999999999"})
    void anIdThatIsNoIdOnAShipmentOrCancellationAnswers400NamingTheId(String id) throws Exception {
        for (String action : new String[]{"shipment", "cancellation"}) {
            HttpResponse<String> response = api.http().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + api.server().port()
                            + "/orders/" + id + "/" + action)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"carrier\":\"VNPost\",\"trackingNumber\":\"T1\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(action + " " + id).isEqualTo(400);
            assertField(response, "id");
        }
        assertThat(pg.dsl().fetchCount(io.mailroom.orders.jooq.Tables.ORDER_SHIPMENT)).isZero();
        assertAGoodOrderStillGoesThrough();
    }

    private static void assertAGoodOrderStillGoesThrough() throws Exception {
        int messages = pg.dsl().fetchCount(OUTBOX_MESSAGE);
        HttpResponse<String> placed = post(OrderFixtures.SAMPLE_JSON.getBytes(StandardCharsets.UTF_8));
        assertThat(placed.statusCode()).isEqualTo(201);
        long id = json(placed).get("orderId").asLong();
        assertThat(get("/orders/" + id).statusCode()).isEqualTo(200);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE)).isEqualTo(messages + 1);
    }

    private static void assertField(HttpResponse<String> response, String field) throws IOException {
        JsonNode body = json(response);
        assertThat(body.path("field").asText()).as(response.body()).isEqualTo(field);
        assertThat(body.path("error").asText()).isNotBlank();
    }

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return api.http().send(HttpRequest.newBuilder(URI.create(api.server().baseUri() + path.substring(1))).GET().build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static HttpResponse<String> post(byte[] body) throws IOException, InterruptedException {
        return api.http().send(HttpRequest.newBuilder(api.server().baseUri().resolve("/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static JsonNode json(HttpResponse<String> response) throws IOException {
        return OrderJson.mapper().readTree(response.body());
    }
}
