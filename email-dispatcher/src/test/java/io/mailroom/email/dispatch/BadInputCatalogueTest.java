package io.mailroom.email.dispatch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.http.HttpMailTransport;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.email.dispatch.DispatchFixture.key;
import static io.mailroom.email.dispatch.DispatchFixture.message;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bad-input catalogue of the email side: payloads that reach the handler (valid jsonb, so
 * already valid UTF-8 without U+0000: what PostgreSQL refuses is refused at enqueue, see
 * outbox-core's BadInputCatalogueTest) but cannot make a safe email. Each one fails its message at
 * once, on the first attempt, with the payload field named in {@code last_error}; nothing reaches
 * the provider for it; and the good messages claimed in the same batch, before and after it, are
 * sent. The catalogue holds envelopes as the email API writes them (an application's own older
 * documents are its payload reader's to refuse: the example shop's LegacyOrderPayloadTest).
 */
class BadInputCatalogueTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static WireMockServer provider;
    private ResilientTransport transport;

    @BeforeAll
    static void startProvider() {
        provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1")
                .containerThreads(8).jettyAcceptors(1));
        provider.start();
    }

    @AfterAll
    static void stopProvider() {
        provider.stop();
    }

    @BeforeEach
    void setUp() {
        provider.resetAll();
        provider.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(202)
                .withHeader("Content-Type", "application/json").withBody("{\"id\":\"prov-1\"}")));
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record");
        transport = DispatchFixture.resilient(new HttpMailTransport(HttpMailConfig.of(URI.create(provider.baseUrl()), "tok_test")
                .withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(2))), TransportPolicyConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        transport.close();
    }

    /** A valid receipt envelope, as an application writes it through the email API. */
    private static ObjectNode validPayload(long orderId) {
        return tree(DispatchFixture.payload(orderId, "customer" + orderId + "@example.com", "Customer " + orderId));
    }

    private static ObjectNode tree(String json) {
        try {
            return (ObjectNode) JSON.readTree(json);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A valid envelope of order 2 with one change. */
    private static Arguments bad(String what, String field, Consumer<ObjectNode> change) {
        return Arguments.of(what, field, (Supplier<String>) () -> {
            ObjectNode p = validPayload(2);
            change.accept(p);
            return p.toString();
        });
    }

    private static Arguments raw(String what, String field, String json) {
        return Arguments.of(what, field, (Supplier<String>) () -> json);
    }

    private static ObjectNode to(ObjectNode p) {
        return (ObjectNode) p.get("to");
    }

    private static ObjectNode order(ObjectNode p) {
        return (ObjectNode) p.get("data").get("order");
    }

    static Stream<Arguments> badEnvelopes() {
        return Stream.of(
                raw("a JSON array instead of an object", "payload", "[1, 2, 3]"),
                raw("a JSON string instead of an object", "payload", "\"order 2 confirmed\""),
                raw("an object without \"v\", no payload reader installed", "payload.v", "{\"orderId\":2}"),
                bad("an envelope version this dispatcher does not read", "payload.v", p -> p.put("v", 3)),
                bad("a v2 envelope whose to is one mailbox, not an array", "payload.to", p -> p.put("v", 2)),
                bad("v as a string", "payload.v", p -> p.put("v", "1")),
                bad("a locale that is no language tag", "payload.locale", p -> p.put("locale", "not a locale!")),
                bad("data that is not an object", "payload.data", p -> p.put("data", "two mugs")),
                bad("no data for the template", "template", p -> p.putObject("data")),
                bad("an amount that is no number", "template", p -> order(p).put("total", "twenty")),
                bad("createdAt that is no timestamp", "template", p -> order(p).put("createdAt", "yesterday")),
                bad("a currency that is no ISO 4217 code", "template", p -> order(p).put("currency", "EURO")),
                // the recipient
                bad("missing recipient", "payload.to", p -> p.remove("to")),
                bad("recipient that is a string", "payload.to", p -> p.put("to", "ann@example.com")),
                bad("recipient address that is a number", "payload.to", p -> to(p).put("address", 42)),
                bad("no address at all", "payload.to", p -> to(p).put("address", "not-an-address")),
                bad("no domain", "payload.to", p -> to(p).put("address", "ann@")),
                bad("a domain without a dot", "payload.to", p -> to(p).put("address", "ann@localhost")),
                bad("a space in the domain", "payload.to", p -> to(p).put("address", "ann@exa mple.com")),
                bad("two at-signs", "payload.to", p -> to(p).put("address", "ann@@example.com")),
                bad("an empty domain label", "payload.to", p -> to(p).put("address", "ann@example..com")),
                bad("an address in angle brackets", "payload.to", p -> to(p).put("address", "<ann@example.com>")),
                bad("a second recipient smuggled in", "payload.to", p -> to(p).put("address", "ann@example.com, eve@evil.example")),
                bad("a Reply-To that is no address", "payload.replyTo", p -> p.putObject("replyTo").put("address", "nobody")),
                // CR/LF header injection
                bad("CR LF in the recipient", "payload.to", p -> to(p).put("address", "ann@example.com\r\nBcc: eve@evil.example")),
                bad("CR LF in the To display name", "payload.to", p -> to(p).put("name", "Ann\r\nBcc: eve@evil.example")),
                bad("a bare LF in the name", "payload.to", p -> to(p).put("name", "Ann\nBcc: eve@evil.example")),
                bad("a bare CR in the name", "payload.to", p -> to(p).put("name", "Ann\rBcc: eve@evil.example")),
                bad("CR LF in the Reply-To name", "payload.replyTo", p -> p.putObject("replyTo").put("address", "help@example.com")
                        .put("name", "Help\r\nBcc: eve@evil.example")),
                bad("a header the transport sets", "headers.Bcc", p -> ((ObjectNode) p.get("headers")).put("Bcc", "eve@evil.example")),
                bad("CR LF in a header value", "headers.X-Campaign", p -> ((ObjectNode) p.get("headers"))
                        .put("X-Campaign", "a\r\nBcc: eve@evil.example")),
                bad("a header value that is no string", "payload.headers.X-Campaign", p -> ((ObjectNode) p.get("headers"))
                        .put("X-Campaign", 7)),
                // characters that reach the handler (JSON escapes jsonb accepts) and are refused in a header
                bad("BEL", "payload.to", p -> to(p).put("name", "Ann\u0007")),
                bad("ESC (terminal escape)", "payload.to", p -> to(p).put("name", "Ann\u001b[31m")),
                bad("DEL", "payload.to", p -> to(p).put("name", "Ann\u007f")),
                bad("C1 NEL", "payload.to", p -> to(p).put("name", "Ann\u0085Bcc")),
                bad("Unicode line separator", "payload.to", p -> to(p).put("name", "Ann\u2028Bcc: eve@evil.example")),
                bad("bidi override", "payload.to", p -> to(p).put("name", "Ann \u202Emoc.live")),
                // RFC 2047 encoded words that a mail client decodes to a line break or a bidi override
                bad("CR LF in an encoded word of the name", "payload.to", p -> to(p).put("name", "=?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?=")),
                bad("bidi override in an encoded word of the name", "payload.to", p -> to(p).put("name", "=?UTF-8?Q?Support_=E2=80=AEmoc.knab?=")),
                bad("CR LF in an encoded word of a header value", "headers.X-Campaign", p -> ((ObjectNode) p.get("headers"))
                        .put("X-Campaign", "=?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?=")),
                bad("bidi override in a line name (the bodies)", "textBody", p -> ((ObjectNode) order(p).get("lines").get(0))
                        .put("name", "Mug \u202Egnp.exe")),
                // oversized
                bad("a 10 MB display name", "payload.to", p -> to(p).put("name", "A".repeat(10 * 1024 * 1024))),
                // the catalogue stops a rendering at 2 MiB characters, long before the body limit
                bad("10 MB worth of order lines", "template", p -> {
                    ArrayNode lines = order(p).putArray("lines");
                    for (int i = 0; i < 40_000; i++) {
                        lines.addObject().put("sku", "SKU-" + i).put("name", "x".repeat(200)).put("quantity", 1)
                                .put("unitPrice", 1).put("amount", 1);
                    }
                }));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("badEnvelopes")
    void aPayloadThatCannotMakeASafeEmailFailsAtOnceNamingTheFieldAndTheOthersAreSent(String what, String field,
                                                                                  Supplier<String> payload) {
        String badJson = payload.get();
        DispatchFixture.enqueueOrder(pg.dsl(), 1);
        pg.dsl().transaction(cfg -> DispatchFixture.enqueue(cfg.dsl(), 2, badJson));
        DispatchFixture.enqueueOrder(pg.dsl(), 3);

        assertThat(dispatcher(io.mailroom.email.Email.DEFAULT_MAX_BODY_BYTES).runOnce()).isEqualTo(3);

        Record row = message(pg.dsl(), 2);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).as(what).isEqualTo("failed");
        assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).as("failed on the first attempt").isEqualTo(1);
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).as(what).contains(field + ":");
        provider.verify(0, postRequestedFor(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", equalTo(key(2))));
        assertThat(message(pg.dsl(), 1).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        assertThat(message(pg.dsl(), 3).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        provider.verify(2, postRequestedFor(urlEqualTo("/v1/emails")));
    }

    @Test
    void aBodyOverTheConfiguredLimitFailsNamingTheBodyAndTheOthersAreSent() {
        ObjectNode big = validPayload(2);
        ArrayNode lines = order(big).putArray("lines");
        for (int i = 0; i < 100; i++) {
            lines.addObject().put("sku", "SKU-" + i).put("name", "Article " + "n".repeat(150))
                    .put("quantity", 1).put("unitPrice", 1).put("amount", 1);
        }
        order(big).put("total", 100);
        DispatchFixture.enqueueOrder(pg.dsl(), 1);
        pg.dsl().transaction(cfg -> DispatchFixture.enqueue(cfg.dsl(), 2, big.toString()));

        assertThat(dispatcher(16 * 1024).runOnce()).isEqualTo(2);

        Record row = message(pg.dsl(), 2);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("failed");
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("body:").contains("the limit is 16384");
        assertThat(message(pg.dsl(), 1).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        provider.verify(1, postRequestedFor(urlEqualTo("/v1/emails")));
    }

    @Test
    void aTenMegabytePayloadWhoseExtraFieldTheTemplateIgnoresIsSentWithASmallBody() {
        // The outbox does not cap payload size (jsonb takes up to 255 MB); the template reads only
        // its fields, so the email stays small. Callers should not put blobs in payloads: the claim
        // returns the payload of every claimed row.
        ObjectNode payload = validPayload(2);
        ((ObjectNode) payload.get("data")).put("attachmentBase64", "Q".repeat(10 * 1024 * 1024));
        pg.dsl().transaction(cfg -> DispatchFixture.enqueue(cfg.dsl(), 2, payload.toString()));

        assertThat(dispatcher(io.mailroom.email.Email.DEFAULT_MAX_BODY_BYTES).runOnce()).isEqualTo(1);

        assertThat(message(pg.dsl(), 2).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        List<LoggedRequest> sent = provider.findAll(postRequestedFor(urlEqualTo("/v1/emails")));
        assertThat(sent).hasSize(1);
        assertThat(sent.getFirst().getBody().length).isLessThan(64 * 1024);
        assertThat(sent.getFirst().getBodyAsString()).doesNotContain("QQQQ");
    }

    @Test
    void validUnicodeNamesAreSentUnchanged() {
        ObjectNode payload = validPayload(2);
        to(payload).put("name", "Zoë Ñúñez 李雷 😀");
        ((ObjectNode) payload.get("data").get("customer")).put("name", "Zoë Ñúñez 李雷 😀");
        ((ObjectNode) order(payload).get("lines").get(0)).put("name", "Tasse « Café » ☕");
        pg.dsl().transaction(cfg -> DispatchFixture.enqueue(cfg.dsl(), 2, payload.toString()));

        assertThat(dispatcher(io.mailroom.email.Email.DEFAULT_MAX_BODY_BYTES).runOnce()).isEqualTo(1);

        assertThat(message(pg.dsl(), 2).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        String body = provider.findAll(postRequestedFor(urlEqualTo("/v1/emails"))).getFirst().getBodyAsString();
        assertThat(body).contains("Zoë Ñúñez 李雷 😀").contains("Tasse « Café » ☕");
    }

    @Test
    void anOrderIdThatNamesNoOrderIsSentFromItsPayload() {
        // The dispatcher never reads a business's tables (DESIGN: the payload carries what the email
        // needs): a library database has no orders table at all, and an outbox message about an
        // order is sent from its payload. Only order-service's API answers "no such order".
        assertThat(pg.dsl().fetchValue("SELECT to_regclass('orders') IS NULL")).isEqualTo(true);
        pg.dsl().transaction(cfg -> DispatchFixture.enqueue(cfg.dsl(), 424242, validPayload(424242).toString()));

        assertThat(dispatcher(io.mailroom.email.Email.DEFAULT_MAX_BODY_BYTES).runOnce()).isEqualTo(1);

        assertThat(message(pg.dsl(), 424242).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        provider.verify(1, postRequestedFor(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", equalTo(key(424242))));
    }

    private Dispatcher dispatcher(long maxBodyBytes) {
        EmailHandler handler = new EmailHandler(pg.dataSource(), new IdempotencyStore(), DispatchFixture.composer(maxBodyBytes),
                transport, AmbiguityPolicy.resendWithKey(Duration.ofHours(24)), "bad-input", null);
        return new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("bad-input").batchSize(10).build(),
                Map.of(DispatchFixture.TOPIC, handler), new TransportGate(Map.of(DispatchFixture.TOPIC, transport)), null);
    }
}
