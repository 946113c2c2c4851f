package io.mailroom.orders;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.orders.jooq.Tables.ORDER_CANCELLATION;
import static io.mailroom.orders.jooq.Tables.ORDER_SHIPMENT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An order's life over HTTP: the customer's locale, the shipment and the cancellation, each with its
 * email written in the same transaction, and every refusal (400 naming the field, 404, 409) leaving
 * nothing behind. Identical repeats answer as the first did and queue no second email.
 */
class OrderLifecycleHttpTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final OrderApiExtension api = new OrderApiExtension(pg);


    private static final String SHIPMENT = """
            {"carrier": "Giao Hàng Nhanh", "trackingNumber": "GHN-7731", "trackingUrl": "https://track.example.com/GHN-7731"}""";

    @Test
    void theCustomersLocaleIsStoredAndEveryEmailOfTheOrderIsInIt() throws Exception {
        long id = place("vi", "Nguyễn Thị Ánh");
        assertThat(pg.dsl().select(ORDERS.LOCALE).from(ORDERS).where(ORDERS.ID.eq(id)).fetchSingle().value1()).isEqualTo("vi");
        assertThat(json(get("/orders/" + id)).get("locale").asText()).isEqualTo("vi");
        assertThat(envelope("email-order-" + id).get("locale").asText()).isEqualTo("vi");

        assertThat(post("/orders/" + id + "/shipment", SHIPMENT).statusCode()).isEqualTo(201);
        JsonNode shipped = envelope("email-order-" + id + "-shipped");
        assertThat(shipped.get("locale").asText()).isEqualTo("vi");
        assertThat(shipped.get("to").get("name").asText()).isEqualTo("Nguyễn Thị Ánh");

        long english = place(null, "Ada Lovelace");
        assertThat(json(get("/orders/" + english)).get("locale").asText()).isEqualTo("en");
        assertThat(envelope("email-order-" + english).get("locale").asText()).isEqualTo("en");
        long region = place("vi-vn", "An");
        assertThat(json(get("/orders/" + region)).get("locale").asText()).isEqualTo("vi-VN");
    }

    @ParameterizedTest(name = "[{index}] locale {0}")
    @CsvSource({"fr", "'vi_VN'", "'en-'", "'<script>'", "'x-klingon'", "''", "'vi-VN-u-ca-buddhist'"})
    void aLocaleTheShopDoesNotWriteIn400sNamingItAndWritesNothing(String locale) throws Exception {
        int orders = pg.dsl().fetchCount(ORDERS);
        HttpResponse<String> r = post("/orders", order(locale, "Ada"));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(json(r).get("field").asText()).isEqualTo("locale");
        assertThat(json(r).get("error").asText()).contains("en").contains("vi");
        assertThat(pg.dsl().fetchCount(ORDERS)).isEqualTo(orders);
    }

    @Test
    void aNumberForTheLocaleIs400NamingIt() throws Exception {
        ObjectNode body = (ObjectNode) OrderJson.mapper().readTree(order(null, "Ada"));
        body.put("locale", 42);
        HttpResponse<String> r = post("/orders", body.toString());
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(json(r).get("field").asText()).isEqualTo("locale");
    }

    @Test
    void shippingRecordsTheShipmentAndQueuesTheNoticeOnceAndAnIdenticalRepeatGetsTheFirstAnswer() throws Exception {
        long id = place("en", "Ada Lovelace");

        HttpResponse<String> first = post("/orders/" + id + "/shipment", SHIPMENT);
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Location")).contains("/orders/" + id);
        assertThat(first.headers().firstValue(OrderHttpApi.REPLAYED_HEADER)).isEmpty();
        JsonNode body = json(first);
        assertThat(body.get("status").asText()).isEqualTo("shipped");
        assertThat(body.get("carrier").asText()).isEqualTo("Giao Hàng Nhanh");
        assertThat(body.get("idempotencyKey").asText()).isEqualTo("email-order-" + id + "-shipped");

        var message = pg.dsl().selectFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-order-" + id + "-shipped"))
                .fetchSingle();
        assertThat(message.getTopic()).isEqualTo("email.order_shipped");
        assertThat(message.getAggregateType()).isEqualTo("order");
        assertThat(message.getAggregateId()).isEqualTo(Long.toString(id));
        JsonNode envelope = OrderJson.mapper().readTree(message.getPayload().data());
        assertThat(envelope.get("template").asText()).isEqualTo("order_shipped");
        assertThat(envelope.get("data").get("shipment").get("trackingNumber").asText()).isEqualTo("GHN-7731");
        assertThat(envelope.get("data").get("shipment").get("trackingUrl").asText()).isEqualTo("https://track.example.com/GHN-7731");
        assertThat(envelope.get("data").get("order").get("id").asText()).isEqualTo(Long.toString(id));
        assertThat(json(get("/orders/" + id)).get("status").asText()).isEqualTo("shipped");

        HttpResponse<String> again = post("/orders/" + id + "/shipment", SHIPMENT);
        assertThat(again.statusCode()).isEqualTo(201);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.headers().firstValue(OrderHttpApi.REPLAYED_HEADER)).contains("true");
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.AGGREGATE_ID.eq(Long.toString(id)))).isEqualTo(2);

        HttpResponse<String> different = post("/orders/" + id + "/shipment", SHIPMENT.replace("GHN-7731\",", "GHN-9999\","));
        assertThat(different.statusCode()).isEqualTo(409);
        assertThat(json(different).get("field").asText()).isEqualTo("trackingNumber");
        HttpResponse<String> noUrl = post("/orders/" + id + "/shipment", "{\"carrier\": \"Giao Hàng Nhanh\", \"trackingNumber\": \"GHN-7731\"}");
        assertThat(noUrl.statusCode()).isEqualTo(409);
        assertThat(json(noUrl).get("field").asText()).isEqualTo("trackingUrl");

        HttpResponse<String> cancel = post("/orders/" + id + "/cancellation", "{\"reason\": \"too late\"}");
        assertThat(cancel.statusCode()).isEqualTo(409);
        assertThat(json(cancel).get("field").asText()).isEqualTo("id");
        assertThat(json(cancel).get("error").asText()).contains("has shipped");
        assertThat(pg.dsl().fetchCount(ORDER_CANCELLATION, ORDER_CANCELLATION.ORDER_ID.eq(id))).isZero();
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.AGGREGATE_ID.eq(Long.toString(id)))).isEqualTo(2);
    }

    @Test
    void cancellingRecordsItAndQueuesItsEmailOnceAndTheOrderCannotShipAfterwards() throws Exception {
        long id = place("vi", "Trần Văn Bảo");

        HttpResponse<String> first = post("/orders/" + id + "/cancellation", "{\"reason\": \"Khách đổi ý\"}");
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(json(first).get("status").asText()).isEqualTo("cancelled");
        assertThat(json(first).get("reason").asText()).isEqualTo("Khách đổi ý");
        JsonNode envelope = envelope("email-order-" + id + "-cancelled");
        assertThat(envelope.get("template").asText()).isEqualTo("order_cancelled");
        assertThat(envelope.get("locale").asText()).isEqualTo("vi");
        assertThat(envelope.get("data").get("cancellation").get("reason").asText()).isEqualTo("Khách đổi ý");
        assertThat(envelope.get("data").get("order").get("total").decimalValue()).isEqualByComparingTo("18.50");
        assertThat(envelope.get("data").get("order").get("currency").asText()).isEqualTo("EUR");
        assertThat(json(get("/orders/" + id)).get("status").asText()).isEqualTo("cancelled");

        HttpResponse<String> again = post("/orders/" + id + "/cancellation", "{\"reason\": \"Khách đổi ý\"}");
        assertThat(again.statusCode()).isEqualTo(201);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.headers().firstValue(OrderHttpApi.REPLAYED_HEADER)).contains("true");

        HttpResponse<String> other = post("/orders/" + id + "/cancellation", "{}");
        assertThat(other.statusCode()).isEqualTo(409);
        assertThat(json(other).get("field").asText()).isEqualTo("reason");

        HttpResponse<String> ship = post("/orders/" + id + "/shipment", SHIPMENT);
        assertThat(ship.statusCode()).isEqualTo(409);
        assertThat(json(ship).get("field").asText()).isEqualTo("id");
        assertThat(json(ship).get("error").asText()).contains("was cancelled");
        assertThat(pg.dsl().fetchCount(ORDER_SHIPMENT, ORDER_SHIPMENT.ORDER_ID.eq(id))).isZero();
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.AGGREGATE_ID.eq(Long.toString(id)))).isEqualTo(2);
    }

    @Test
    void aCancellationWithoutABodyHasNoReasonAndItsRepeatIsTheSame() throws Exception {
        long id = place(null, "Ada");
        HttpResponse<String> first = send(HttpRequest.newBuilder(uri("/orders/" + id + "/cancellation"))
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(json(first).get("reason").isNull()).isTrue();
        assertThat(envelope("email-order-" + id + "-cancelled").get("data").get("cancellation").get("reason").isNull()).isTrue();
        HttpResponse<String> again = post("/orders/" + id + "/cancellation", "{}");
        assertThat(again.statusCode()).isEqualTo(201);
        assertThat(again.headers().firstValue(OrderHttpApi.REPLAYED_HEADER)).contains("true");
    }

    @Test
    void anUnknownOrderIs404NamingTheIdForBoth() throws Exception {
        for (String path : new String[]{"/orders/987654/shipment", "/orders/987654/cancellation"}) {
            HttpResponse<String> r = post(path, path.endsWith("shipment") ? SHIPMENT : "{}");
            assertThat(r.statusCode()).as(path).isEqualTo(404);
            assertThat(json(r).get("field").asText()).isEqualTo("id");
        }
        assertThat(post("/orders/0/shipment", SHIPMENT).statusCode()).isEqualTo(400);
        assertThat(post("/orders/abc/cancellation", "{}").statusCode()).isEqualTo(400);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', textBlock = """
            no carrier                   | {"trackingNumber": "T1"}                                                  | carrier
            blank carrier                | {"carrier": "  ", "trackingNumber": "T1"}                                 | carrier
            carrier with a line break    | {"carrier": "A\\r\\nBcc: x@evil.example", "trackingNumber": "T1"}          | carrier
            no tracking number           | {"carrier": "VNPost"}                                                     | trackingNumber
            tracking number too long     | {"carrier": "VNPost", "trackingNumber": "%s"}                             | trackingNumber
            tracking number a number     | {"carrier": "VNPost", "trackingNumber": 42}                               | trackingNumber
            plain http link              | {"carrier": "VNPost", "trackingNumber": "T1", "trackingUrl": "http://t.example/1"}      | trackingUrl
            javascript link              | {"carrier": "VNPost", "trackingNumber": "T1", "trackingUrl": "javascript:alert(1)"}     | trackingUrl
            upper-case scheme            | {"carrier": "VNPost", "trackingNumber": "T1", "trackingUrl": "HTTPS://t.example/1"}     | trackingUrl
            link with a space            | {"carrier": "VNPost", "trackingNumber": "T1", "trackingUrl": "https://t.example/a b"}  | trackingUrl
            link with a quote            | {"carrier": "VNPost", "trackingNumber": "T1", "trackingUrl": "https://t.example/\\"x"}  | trackingUrl
            link without a host          | {"carrier": "VNPost", "trackingNumber": "T1", "trackingUrl": "https:///path"}          | trackingUrl
            link with credentials        | {"carrier": "VNPost", "trackingNumber": "T1", "trackingUrl": "https://u:p@t.example/"} | trackingUrl
            an unknown field             | {"carrier": "VNPost", "trackingNumber": "T1", "eta": "tomorrow"}          | eta
            not JSON                     | carrier=VNPost                                                            | body
            """)
    void anInvalidShipment400sNamingTheFieldAndWritesNothing(String what, String body, String field) throws Exception {
        long id = place(null, "Ada");
        HttpResponse<String> r = post("/orders/" + id + "/shipment", body.formatted("T".repeat(101)));
        assertThat(r.statusCode()).as(what).isEqualTo(400);
        assertThat(json(r).get("field").asText()).as(what).isEqualTo(field);
        assertThat(pg.dsl().fetchCount(ORDER_SHIPMENT, ORDER_SHIPMENT.ORDER_ID.eq(id))).isZero();
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.AGGREGATE_ID.eq(Long.toString(id)))).isEqualTo(1);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', textBlock = """
            blank reason            | {"reason": " "}                 | reason
            reason with a newline   | {"reason": "a\\nb"}             | reason
            reason a number         | {"reason": 7}                   | reason
            reason too long         | {"reason": "%s"}                | reason
            unknown field           | {"why": "x"}                    | why
            """)
    void anInvalidCancellation400sNamingTheFieldAndWritesNothing(String what, String body, String field) throws Exception {
        long id = place(null, "Ada");
        HttpResponse<String> r = post("/orders/" + id + "/cancellation", body.formatted("r".repeat(501)));
        assertThat(r.statusCode()).as(what).isEqualTo(400);
        assertThat(json(r).get("field").asText()).as(what).isEqualTo(field);
        assertThat(pg.dsl().fetchCount(ORDER_CANCELLATION, ORDER_CANCELLATION.ORDER_ID.eq(id))).isZero();
    }

    @Test
    void concurrentShipmentsAndCancellationsOfOneOrderRecordOneOfThemWithOneEmail() throws Exception {
        long id = place(null, "Ada");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        java.util.List<java.util.concurrent.Future<HttpResponse<String>>> answers = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                String path = i % 2 == 0 ? "/orders/" + id + "/shipment" : "/orders/" + id + "/cancellation";
                String body = i % 2 == 0 ? SHIPMENT : "{}";
                answers.add(pool.submit(() -> {
                    go.await();
                    return post(path, body);
                }));
            }
            go.countDown();
            java.util.Map<Integer, Integer> statuses = new java.util.TreeMap<>();
            for (var answer : answers) {
                statuses.merge(answer.get(30, java.util.concurrent.TimeUnit.SECONDS).statusCode(), 1, Integer::sum);
            }
            // whichever came first: its four requests answer 201 (one recorded, three repeats), the other four 409
            assertThat(statuses).containsExactlyInAnyOrderEntriesOf(java.util.Map.of(201, 4, 409, 4));
        } finally {
            pool.shutdownNow();
        }
        int shipments = pg.dsl().fetchCount(ORDER_SHIPMENT, ORDER_SHIPMENT.ORDER_ID.eq(id));
        int cancellations = pg.dsl().fetchCount(ORDER_CANCELLATION, ORDER_CANCELLATION.ORDER_ID.eq(id));
        assertThat(shipments + cancellations).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.AGGREGATE_ID.eq(Long.toString(id)))).isEqualTo(2);
    }

    @Test
    void whenTheEmailCannotBeQueuedTheShipmentIsNotRecordedEither() throws Exception {
        long id = place(null, "Ada");
        // another writer already holds the notice's key: the enqueue fails inside the transaction
        pg.dsl().transaction(cfg -> new OutboxEnqueuer().enqueue(cfg.dsl(), NewMessage.of("email.order_shipped", "order",
                Long.toString(id), "email-order-" + id + "-shipped", "{}")));

        HttpResponse<String> r = post("/orders/" + id + "/shipment", SHIPMENT);

        assertThat(r.statusCode()).isEqualTo(409);
        assertThat(pg.dsl().fetchCount(ORDER_SHIPMENT, ORDER_SHIPMENT.ORDER_ID.eq(id))).isZero();
        assertThat(json(get("/orders/" + id)).get("status").asText()).isEqualTo("placed");
    }

    private static String order(String locale, String name) throws IOException {
        ObjectNode body = (ObjectNode) OrderJson.mapper().readTree(OrderFixtures.SAMPLE_JSON);
        body.put("customerName", name);
        if (locale != null) {
            body.put("locale", locale);
        }
        return body.toString();
    }

    private static long place(String locale, String name) throws Exception {
        HttpResponse<String> r = post("/orders", order(locale, name));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        return json(r).get("orderId").asLong();
    }

    private static JsonNode envelope(String key) throws IOException {
        return OrderJson.mapper().readTree(pg.dsl().select(OUTBOX_MESSAGE.PAYLOAD).from(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key)).fetchSingle().value1().data());
    }

    private static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + api.server().port() + path);
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return send(HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build());
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return send(HttpRequest.newBuilder(uri(path)).GET().build());
    }

    private static HttpResponse<String> send(HttpRequest request) throws Exception {
        return api.http().send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static JsonNode json(HttpResponse<String> response) throws IOException {
        return OrderJson.mapper().readTree(response.body());
    }
}
