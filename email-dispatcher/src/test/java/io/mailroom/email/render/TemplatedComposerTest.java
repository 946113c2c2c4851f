package io.mailroom.email.render;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.dispatch.EmailComposer;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.templates.TemplateCatalogue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The dispatcher's rendering of emails from their envelopes, with the test template {@code receipt}
 * (an application's older documents are read by its own payload reader: the example shop's
 * LegacyOrderPayloadTest). Hostile text is escaped in HTML and kept as written in text, Vietnamese arrives as written,
 * money follows the currency, and whatever cannot make a safe email fails for good, naming why.
 */
class TemplatedComposerTest {

    private static final String CONFIRMATION = "email.receipt";
    private static final EmailAddress SHOP = EmailAddress.of("shop@example.com", "Example Shop");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static final String ENVELOPE = """
            {"v":1,"template":"receipt","locale":"en","to":{"address":"ann@example.com","name":"Ann"},"headers":{},
             "data":{"customer":{"name":"Ann"},"order":{"id":"102","currency":"EUR","total":42.50,"createdAt":"2026-12-02T10:00:00Z",
             "lines":[{"sku":"A1","name":"Mug","quantity":2,"unitPrice":21.25,"amount":42.50}]}}}""";

    /** A document some application enqueued before the email API: no {@code "v"}. */
    private static final String OLD_DOCUMENT = """
            {"orderId":102,"customerEmail":"ann@example.com","customerName":"Ann"}""";

    private final TemplatedComposer composer = composer(Email.DEFAULT_MAX_BODY_BYTES);

    private static TemplatedComposer composer(long maxBodyBytes) {
        return composer(maxBodyBytes, List.of());
    }

    private static TemplatedComposer composer(long maxBodyBytes, List<PayloadReader> readers) {
        try {
            TemplateCatalogue templates = TemplateCatalogue.load(io.mailroom.testing.TestTemplates.directory());
            Map<String, EmailTopics.Route> routes = EmailTopics.none().routesFor(templates.names());
            return new TemplatedComposer(templates, routes, SHOP, maxBodyBytes, readers);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private EmailComposer.Composed compose(String topic, String payload) throws Exception {
        Instant now = Instant.now();
        return composer.compose(new ClaimedMessage(102, now, topic, "order", "102", "email-order-102", null, payload,
                1, 10, 1, now, now.plusSeconds(60)));
    }

    private Email render(String payload) throws Exception {
        return compose(CONFIRMATION, payload).email();
    }

    private static ObjectNode tree(String json) {
        try {
            return (ObjectNode) JSON.readTree(json);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static ObjectNode order(ObjectNode envelope) {
        return (ObjectNode) envelope.get("data").get("order");
    }

    @Test
    void rendersTheReceiptFromItsTemplateWithTheHeadersEveryEmailCarries() throws Exception {
        Email email = render(ENVELOPE);
        assertThat(email.from()).isEqualTo(SHOP);
        assertThat(email.to()).isEqualTo(EmailAddress.of("ann@example.com", "Ann"));
        assertThat(email.subject()).isEqualTo("Receipt #102");
        assertThat(email.templateVersion()).startsWith("receipt@");
        assertThat(email.headers()).containsEntry("Auto-Submitted", "auto-generated")
                .containsEntry("X-Mailroom-Template", email.templateVersion());
        assertThat(email.textBody()).contains("Thank you, Ann!").contains("- Mug x 2: €42.50").contains("Total: €42.50");
        assertThat(email.htmlBody()).contains("<html lang=\"en\">").contains("€42.50");
    }

    @Test
    void hostileTextIsEscapedInHtmlAndKeptAsWrittenInTextAndTheToName() throws Exception {
        String hostile = "<script>alert('x')</script> & \"Co\"";
        ObjectNode p = tree(ENVELOPE);
        ((ObjectNode) p.get("to")).put("name", hostile);
        ((ObjectNode) p.get("data").get("customer")).put("name", hostile);
        ((ObjectNode) order(p).get("lines").get(0)).put("name", "Mug <b>bold</b> & Saucer");

        Email email = render(p.toString());

        assertThat(email.htmlBody()).doesNotContain("<script>").doesNotContain("<b>bold</b>")
                .containsPattern("Thank you, &lt;script&gt;alert\\((&#39;|')x(&#39;|')\\)&lt;/script&gt; &amp; (&quot;|\")Co(&quot;|\")!")
                .contains("Mug &lt;b&gt;bold&lt;/b&gt; &amp; Saucer");
        assertThat(email.textBody()).contains("Thank you, " + hostile + "!").contains("- Mug <b>bold</b> & Saucer x 2");
        assertThat(email.to().displayName()).isEqualTo(hostile);
        // the subject is one line whatever the data holds: no header can be smuggled through it
        order(p).put("id", "1\r\nBcc: eve@evil.example");
        assertThat(render(p.toString()).subject()).isEqualTo("Receipt #1 Bcc: eve@evil.example");
    }

    @Test
    void vietnameseArrivesAsWrittenInSubjectNameAndBothParts() throws Exception {
        ObjectNode p = tree(ENVELOPE);
        p.put("locale", "vi");
        ((ObjectNode) p.get("to")).put("name", "Nguyễn Thị Ánh");
        ((ObjectNode) p.get("data").get("customer")).put("name", "Nguyễn Thị Ánh");
        order(p).put("currency", "VND").put("total", 535000);
        ((ObjectNode) order(p).get("lines").get(0)).put("name", "Cà phê sữa đá").put("amount", 535000);

        Email email = render(p.toString());

        assertThat(email.subject()).isEqualTo("Biên nhận #102");
        assertThat(email.to().displayName()).isEqualTo("Nguyễn Thị Ánh");
        assertThat(email.textBody()).contains("Cảm ơn bạn, Nguyễn Thị Ánh!").contains("Cà phê sữa đá x 2").contains("535.000").contains("₫");
        assertThat(email.htmlBody()).contains("<html lang=\"vi\">").contains("Cảm ơn bạn, Nguyễn Thị Ánh!").contains("Tổng cộng");
    }

    @Test
    void moneyFollowsTheCurrencysMinorUnit() throws Exception {
        ObjectNode p = tree(ENVELOPE);
        order(p).put("currency", "JPY").put("total", 3000);
        ((ObjectNode) order(p).get("lines").get(0)).put("quantity", 3).put("amount", new BigDecimal("3000"));
        assertThat(render(p.toString()).textBody()).contains("- Mug x 3: ¥3,000").contains("Total: ¥3,000");

        order(p).put("currency", "EUR").put("total", new BigDecimal("42.5"));
        assertThat(render(p.toString()).textBody()).contains("Total: €42.50");
    }

    @ParameterizedTest
    @ValueSource(strings = {"customer", "order"})
    void missingDataFailsForGoodNamingTheVariable(String variable) {
        ObjectNode p = tree(ENVELOPE);
        ((ObjectNode) p.get("data")).remove(variable);
        assertThatThrownBy(() -> render(p.toString()))
                .isInstanceOfSatisfying(RenderException.class, e -> assertThat(e.field()).isEqualTo("template"))
                .hasMessageContaining("'" + variable + "'");
    }

    @Test
    void aMissingLineValueIsNamedToo() {
        ObjectNode p = tree(ENVELOPE);
        ((ObjectNode) order(p).get("lines").get(0)).remove("amount");
        assertThatThrownBy(() -> render(p.toString())).isInstanceOf(RenderException.class).hasMessageContaining("'amount'");
    }

    @Test
    void malformedPayloadsAreRefusedWithoutQuotingThem() {
        assertThatThrownBy(() -> render("{\"v\":1,\"to\":{\"address\":\"secret@example.com\""))
                .isInstanceOf(RenderException.class).hasMessageContaining("payload").hasMessageNotContaining("secret");
        assertThatThrownBy(() -> render("{\"v\":1,\"v\":1}")).isInstanceOf(RenderException.class).hasMessageContaining("payload");
        assertThatThrownBy(() -> render(ENVELOPE + " {}")).isInstanceOf(RenderException.class).hasMessageContaining("payload");
        ObjectNode loneSurrogate = tree(ENVELOPE);
        String bad = loneSurrogate.toString().replace("\"name\":\"Ann\"}", "\"name\":\"Ann\\ud800\"}");
        assertThatThrownBy(() -> render(bad)).isInstanceOf(RenderException.class).hasMessageContaining("payload.to")
                .hasMessageContaining("U+D800");
    }

    @Test
    void aPayloadWithoutVersionFailsNamingItWhenNoPayloadReaderReadsIt() {
        assertThatThrownBy(() -> compose(CONFIRMATION, OLD_DOCUMENT))
                .isInstanceOfSatisfying(RenderException.class, e -> assertThat(e.field()).isEqualTo("payload.v"))
                .hasMessageContaining("no payload reader").hasMessageContaining(CONFIRMATION);
    }

    /** An application's reader: asked only about payloads without "v", on the topics it says it reads. */
    @Test
    void aPayloadReaderTurnsAnOldDocumentIntoTheTemplatesDataUnderItsOwnFingerprint() throws Exception {
        PayloadReader reader = new PayloadReader() {
            @Override
            public boolean reads(String topic, com.fasterxml.jackson.databind.JsonNode payload) {
                return topic.equals(CONFIRMATION) && payload.has("orderId");
            }

            @Override
            public Request read(com.fasterxml.jackson.databind.JsonNode payload) throws RenderException {
                Map<String, Object> order = Map.of("id", payload.get("orderId").asText(), "currency", "EUR",
                        "total", new BigDecimal("1.00"), "createdAt", "2026-12-02T10:00:00Z",
                        "lines", List.of(Map.of("name", "Mug", "quantity", 1, "amount", new BigDecimal("1.00"))));
                return new Request(java.util.Locale.forLanguageTag("vi"), EmailAddress.of(payload.get("customerEmail").asText(), "Ann"),
                        Map.of("customer", Map.of("name", "Ann"), "order", order), List.of("old", payload.get("orderId").asText()));
            }
        };
        TemplatedComposer withReader = composer(Email.DEFAULT_MAX_BODY_BYTES, List.of(reader));
        Instant now = Instant.now();
        EmailComposer.Composed composed = withReader.compose(new ClaimedMessage(102, now, CONFIRMATION, "order", "102",
                "email-order-102", null, OLD_DOCUMENT, 1, 10, 1, now, now.plusSeconds(60)));
        assertThat(composed.email().subject()).isEqualTo("Biên nhận #102");
        assertThat(composed.email().to().address()).isEqualTo("ann@example.com");
        assertThat(composed.fingerprintParts()).containsExactly("old", "102");
        // an envelope is never handed to a reader, and a document the reader does not read still fails
        assertThat(withReader.compose(new ClaimedMessage(103, now, CONFIRMATION, "order", "103", "k", null, ENVELOPE,
                1, 10, 1, now, now.plusSeconds(60))).fingerprintParts()).first().isEqualTo("email-envelope-v1");
        assertThatThrownBy(() -> withReader.compose(new ClaimedMessage(104, now, CONFIRMATION, "order", "104", "k2", null,
                "{\"something\":1}", 1, 10, 1, now, now.plusSeconds(60))))
                .isInstanceOfSatisfying(RenderException.class, e -> assertThat(e.field()).isEqualTo("payload.v"));
    }

    @Test
    void bodiesOverTheConfiguredLimitFailNamingTheBody() throws Exception {
        TemplatedComposer small = composer(4096);
        Instant now = Instant.now();
        ObjectNode p = tree(ENVELOPE);
        for (int i = 0; i < 40; i++) {
            ((com.fasterxml.jackson.databind.node.ArrayNode) order(p).get("lines")).addObject().put("sku", "S" + i)
                    .put("name", "Item " + i).put("quantity", 1).put("unitPrice", 1).put("amount", 1);
        }
        assertThatThrownBy(() -> small.compose(new ClaimedMessage(1, now, CONFIRMATION, "order", "1", "k", null, p.toString(),
                1, 10, 1, now, now.plusSeconds(60))))
                .isInstanceOf(io.mailroom.email.InvalidEmailException.class)
                .hasMessageContaining("the limit is 4096")
                .extracting(e -> ((io.mailroom.email.InvalidEmailException) e).field()).isEqualTo("body");
    }

    @Test
    void theFingerprintIsTheRequestNotTheRendering() throws Exception {
        List<String> parts = compose(CONFIRMATION, ENVELOPE).fingerprintParts();
        assertThat(compose(CONFIRMATION, ENVELOPE).fingerprintParts()).isEqualTo(parts);
        // key order in the data does not matter, any value does
        ObjectNode reordered = tree(ENVELOPE);
        ObjectNode data = (ObjectNode) reordered.remove("data");
        ObjectNode flipped = JSON.createObjectNode();
        flipped.set("order", data.get("order"));
        flipped.set("customer", data.get("customer"));
        reordered.set("data", flipped);
        assertThat(compose(CONFIRMATION, reordered.toString()).fingerprintParts()).isEqualTo(parts);
        ObjectNode other = tree(ENVELOPE);
        order(other).put("total", 43);
        assertThat(compose(CONFIRMATION, other.toString()).fingerprintParts()).isNotEqualTo(parts);
        assertThat(parts).noneMatch(p -> p.contains("receipt@"));
    }
}
