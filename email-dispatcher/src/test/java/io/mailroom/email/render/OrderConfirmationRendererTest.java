package io.mailroom.email.render;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OrderConfirmationRendererTest {

    static final String PAYLOAD = """
            {"orderId":102,"customerEmail":"ann@example.com","customerName":"Ann","currency":"EUR","total":"42.50",
             "createdAt":"2026-12-02T10:00:00Z","lines":[{"sku":"A1","name":"Mug","quantity":2,"unitPrice":"21.25"}]}""";

    final RenderConfig config = RenderConfig.of(EmailAddress.of("shop@example.com", "Example Shop"));
    final OrderConfirmationRenderer renderer = new OrderConfirmationRenderer(config);
    final JsonMapper json = JsonMapper.builder().build();

    @Test
    void rendersTheOrderConfirmation() throws Exception {
        Email email = renderer.render(PAYLOAD);

        assertThat(email.from()).isEqualTo(EmailAddress.of("shop@example.com", "Example Shop"));
        assertThat(email.to()).isEqualTo(EmailAddress.of("ann@example.com", "Ann"));
        assertThat(email.subject()).isEqualTo("Your order #102 is confirmed");
        assertThat(email.templateVersion()).isEqualTo(OrderConfirmationRenderer.TEMPLATE_VERSION);
        assertThat(email.headers()).containsEntry("Auto-Submitted", "auto-generated");
        assertThat(email.textBody())
                .startsWith("Hello Ann,\n")
                .contains("order #102, placed on 2 December 2026 at 10:00 UTC")
                .contains("2 x Mug (SKU A1), 21.25 EUR each: 42.50 EUR")
                .contains("Total: 42.50 EUR")
                .endsWith("Mailroom Shop\n");
        assertThat(email.htmlBody())
                .contains("<p>Hello Ann,</p>")
                .contains("<tr><td>Mug</td><td>A1</td><td>2</td><td>21.25 EUR</td><td>42.50 EUR</td></tr>")
                .contains("<th colspan=\"4\">Total</th><td>42.50 EUR</td>");
    }

    @Test
    void acceptsTheOrderServicesDocumentShape() throws Exception {
        // As order-service's OrderDocument writes it: extra lineNo/lineTotal, microsecond timestamps.
        String document = """
                {"orderId":7,"customerEmail":"bob@example.com","customerName":"Bob","currency":"EUR","total":"12.50",
                 "createdAt":"2025-01-31T09:15:00.123456Z",
                 "lines":[{"lineNo":1,"sku":"B2","name":"Plate","quantity":2,"unitPrice":"4.25","lineTotal":"8.50"},
                          {"lineNo":2,"sku":"C3","name":"Cup","quantity":1,"unitPrice":"4.00","lineTotal":"4.00"}]}""";
        Email email = renderer.render(document);
        assertThat(email.subject()).isEqualTo("Your order #7 is confirmed");
        assertThat(email.textBody()).contains("placed on 31 January 2025 at 09:15 UTC")
                .contains("2 x Plate (SKU B2), 4.25 EUR each: 8.50 EUR").contains("Total: 12.50 EUR");
    }

    @Test
    void sameBytesSameFingerprint() throws Exception {
        assertThat(renderer.render(PAYLOAD).fingerprintParts()).isEqualTo(renderer.render(PAYLOAD.getBytes(StandardCharsets.UTF_8)).fingerprintParts());
    }

    @Test
    void escapesPayloadTextInHtmlButNotInPlainText() throws Exception {
        ObjectNode p = payload();
        p.put("customerName", "<script>alert('x')</script> & \"Co\"");
        ObjectNode line = (ObjectNode) p.withArray("lines").get(0);
        line.put("sku", "A&B<1>");
        line.put("name", "Mug <b>bold</b> & Saucer");

        Email email = renderer.render(p.toString());

        assertThat(email.htmlBody())
                .doesNotContain("<script>").doesNotContain("<b>bold</b>").doesNotContain("A&B")
                .contains("Hello &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;Co&quot;,")
                .contains("<td>Mug &lt;b&gt;bold&lt;/b&gt; &amp; Saucer</td><td>A&amp;B&lt;1&gt;</td>");
        assertThat(email.textBody()).contains("Hello <script>alert('x')</script> & \"Co\",").contains("(SKU A&B<1>)");
        assertThat(email.to().displayName()).isEqualTo("<script>alert('x')</script> & \"Co\"");
    }

    @Test
    void moneyIsScaledToTheCurrencyAndMultipliedPerLine() throws Exception {
        ObjectNode p = payload();
        p.put("currency", "JPY");
        p.put("total", 3000);
        ObjectNode line = (ObjectNode) p.withArray("lines").get(0);
        line.put("quantity", 3);
        line.put("unitPrice", "1000");
        assertThat(renderer.render(p.toString()).textBody()).contains("3 x Mug (SKU A1), 1000 JPY each: 3000 JPY").contains("Total: 3000 JPY");

        p.put("currency", "EUR");
        p.put("total", "42.505");
        assertRenderFails(p.toString(), "total", "more than 2 decimals");
    }

    @ParameterizedTest
    @ValueSource(strings = {"orderId", "customerEmail", "customerName", "currency", "total", "createdAt", "lines"})
    void aMissingFieldIsNamed(String field) {
        ObjectNode p = payload();
        p.remove(field);
        assertRenderFails(p.toString(), field, "is missing");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sku", "name", "quantity", "unitPrice"})
    void aMissingLineFieldIsNamedWithItsIndex(String field) {
        ObjectNode p = payload();
        ObjectNode second = p.withArray("lines").addObject();
        second.put("sku", "B2").put("name", "Plate").put("quantity", 1).put("unitPrice", "0.00");
        second.remove(field);
        assertRenderFails(p.toString(), "lines[1]." + field, "is missing");
    }

    @Test
    void anInvalidRecipientIsPermanentAndNamed() {
        ObjectNode p = payload();
        p.put("customerEmail", "ann@example.com\r\nBcc: eve@example.org");
        assertRenderFails(p.toString(), "customerEmail", "printable ASCII");
        p.put("customerEmail", "not-an-address");
        assertRenderFails(p.toString(), "customerEmail", "local-part@domain");
        p.put("customerEmail", 42);
        assertRenderFails(p.toString(), "customerEmail", "must be a string");
    }

    @Test
    void headerInjectionThroughTheCustomerNameIsRejected() {
        ObjectNode p = payload();
        p.put("customerName", "Ann\r\nBcc: eve@example.org");
        assertRenderFails(p.toString(), "customerName", "control character U+000D");
    }

    @Test
    void malformedJsonIsRejectedWithoutQuotingThePayload() {
        assertRenderFails("{\"orderId\":102, \"customerEmail\": \"secret@example.com\"", "payload", "not valid JSON");
        assertThatThrownBy(() -> renderer.render("{\"orderId\":102,\"customerEmail\":\"secret@example.com\",")).hasMessageNotContaining("secret");
        assertRenderFails("[1,2]", "payload", "must be a JSON object");
        assertRenderFails(PAYLOAD + " {}", "payload", "not valid JSON");
        assertRenderFails("{\"orderId\":1,\"orderId\":2}", "payload", "Duplicate field");
        assertRenderFails("", "payload", "is empty");
    }

    @Test
    void invalidUtf8BytesAreRejectedWithTheirOffset() {
        byte[] bytes = PAYLOAD.getBytes(StandardCharsets.UTF_8);
        int at = PAYLOAD.indexOf("Ann\"");
        bytes[at] = (byte) 0xC3; // lead byte followed by 'n' (not a continuation byte)
        assertThatThrownBy(() -> renderer.render(bytes))
                .isInstanceOf(RenderException.class)
                .hasMessage("payload: is not valid UTF-8 (bad byte sequence at byte offset " + at + ")");

        byte[] cesu = "{\"x\":\"\u00ED\u00A0\u0080\"}".getBytes(StandardCharsets.ISO_8859_1); // an encoded lone surrogate
        assertThatThrownBy(() -> renderer.render(cesu)).isInstanceOf(RenderException.class).hasMessageContaining("not valid UTF-8");
    }

    @Test
    void loneSurrogatesFromJsonEscapesAreRejected() {
        String withEscape = PAYLOAD.replace("\"Ann\"", "\"Ann\\ud800\"");
        assertRenderFails(withEscape, "customerName", "lone surrogate U+D800");
        String inLine = PAYLOAD.replace("\"Mug\"", "\"Mug\\udc00x\"");
        assertRenderFails(inLine, "lines[0].name", "lone surrogate U+DC00");
    }

    @Test
    void invalidValuesAreNamed() {
        ObjectNode p = payload();
        p.put("currency", "EURO");
        assertRenderFails(p.toString(), "currency", "ISO 4217");
        p = payload();
        p.put("createdAt", "yesterday");
        assertRenderFails(p.toString(), "createdAt", "ISO-8601");
        p = payload();
        p.put("total", "-1.00");
        assertRenderFails(p.toString(), "total", "negative");
        p = payload();
        ((ObjectNode) p.withArray("lines").get(0)).put("quantity", 0);
        assertRenderFails(p.toString(), "lines[0].quantity", "integer");
        p = payload();
        p.putArray("lines");
        assertRenderFails(p.toString(), "lines", "at least one");
        p = payload();
        p.put("orderId", "102; DROP");
        assertRenderFails(p.toString(), "orderId", "letters, digits");
    }

    @Test
    void bodiesOverTheConfiguredLimitAreRejected() throws Exception {
        OrderConfirmationRenderer small = new OrderConfirmationRenderer(config.withMaxBodyBytes(2048));
        assertThat(small.render(PAYLOAD).bodyBytes()).isLessThan(2048);
        ObjectNode p = payload();
        for (int i = 0; i < 20; i++) {
            p.withArray("lines").addObject().put("sku", "S" + i).put("name", "Item " + i).put("quantity", 1).put("unitPrice", "1.00");
        }
        assertThatThrownBy(() -> small.render(p.toString()))
                .isInstanceOf(RenderException.class)
                .hasMessageContaining("the limit is 2048")
                .extracting(e -> ((RenderException) e).field()).isEqualTo("body");
    }

    private void assertRenderFails(String payload, String field, String messagePart) {
        assertThatThrownBy(() -> renderer.render(payload))
                .isInstanceOf(RenderException.class)
                .hasMessageContaining(messagePart)
                .extracting(e -> ((RenderException) e).field()).isEqualTo(field);
    }

    private ObjectNode payload() {
        try {
            return (ObjectNode) json.readTree(PAYLOAD);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
