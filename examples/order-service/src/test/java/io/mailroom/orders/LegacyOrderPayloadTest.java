package io.mailroom.orders;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.dispatch.EmailComposer;
import io.mailroom.email.render.RenderException;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.templates.TemplateCatalogue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The shop's reader of the order documents it enqueued before the email API (moved here from the
 * dispatcher's TemplatedComposerTest with the class): found by ServiceLoader, rendered from the
 * shop's order_confirmation template in English, under the retired renderer's fingerprint.
 */
class LegacyOrderPayloadTest {

    private static final String LEGACY = """
            {"orderId":102,"customerEmail":"ann@example.com","customerName":"Ann","currency":"EUR","total":"42.50",
             "createdAt":"2026-12-02T10:00:00Z","lines":[{"lineNo":1,"sku":"A1","name":"Mug","quantity":2,"unitPrice":"21.25","lineTotal":"42.50"}]}""";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path templates;

    private static TemplatedComposer composer() throws Exception {
        TemplateCatalogue catalogue = TemplateCatalogue.load(ShopTemplates.copyTo(templates));
        // the four-argument composer loads the readers on the class path: this module's LegacyOrderPayload
        return new TemplatedComposer(catalogue, Map.of(LegacyOrderPayload.TOPIC,
                new EmailTopics.Route(LegacyOrderPayload.TOPIC, "order_confirmation", null)),
                EmailAddress.of("shop@example.com", "Example Shop"), Email.DEFAULT_MAX_BODY_BYTES);
    }

    private static EmailComposer.Composed compose(String payload) throws Exception {
        Instant now = Instant.now();
        return composer().compose(new ClaimedMessage(102, now, LegacyOrderPayload.TOPIC, "order", "102", "email-order-102", null,
                payload, 1, 10, 1, now, now.plusSeconds(60)));
    }

    private static ObjectNode tree(String json) throws Exception {
        return (ObjectNode) JSON.readTree(json);
    }

    @Test
    void theDispatcherFindsTheReaderOnTheClassPath() {
        assertThat(TemplatedComposer.installedReaders()).hasAtLeastOneElementOfType(LegacyOrderPayload.class);
    }

    @Test
    void aLegacyOrderDocumentIsSentFromTheShopsTemplateInEnglish() throws Exception {
        Email email = compose(LEGACY).email();
        assertThat(email.to()).isEqualTo(EmailAddress.of("ann@example.com", "Ann"));
        assertThat(email.subject()).isEqualTo("Your order #102 is confirmed");
        assertThat(email.textBody()).contains("Thank you, Ann!").contains("- Mug x 2: €42.50").contains("Total: €42.50")
                .contains("because of an order placed with us");
        assertThat(email.templateVersion()).startsWith("order_confirmation@");
    }

    @Test
    void aLegacyDocumentKeepsTheFingerprintTheRetiredRendererReservedItUnder() throws Exception {
        // exactly the retired renderer's fingerprint parts, so a key reserved before the upgrade is the same email
        assertThat(compose(LEGACY).fingerprintParts()).containsExactly(
                "order_confirmation", "102", "ann@example.com", "Ann", "EUR", "42.50", "2026-12-02T10:00:00Z", "1",
                "A1", "Mug", "2", "21.25");
    }

    @Test
    void aLegacyDocumentWithHostileTextIsEscapedAndWithVietnameseIsKept() throws Exception {
        ObjectNode p = tree(LEGACY);
        p.put("customerName", "Nguyễn <Thị> & Ánh");
        ((ObjectNode) p.get("lines").get(0)).put("name", "Cà phê <sữa> đá");
        Email email = compose(p.toString()).email();
        assertThat(email.to().displayName()).isEqualTo("Nguyễn <Thị> & Ánh");
        assertThat(email.textBody()).contains("Thank you, Nguyễn <Thị> & Ánh!").contains("Cà phê <sữa> đá x 2");
        assertThat(email.htmlBody()).contains("Nguyễn &lt;Thị&gt; &amp; Ánh").contains("Cà phê &lt;sữa&gt; đá")
                .doesNotContain("<sữa>");
    }

    @Test
    void legacyMoneyIsScaledToTheCurrencyAndTooManyDecimalsAreNamed() throws Exception {
        ObjectNode p = tree(LEGACY);
        p.put("currency", "JPY");
        p.put("total", 3000);
        ((ObjectNode) p.get("lines").get(0)).put("quantity", 3).put("unitPrice", "1000");
        assertThat(compose(p.toString()).email().textBody()).contains("- Mug x 3: ¥3,000").contains("Total: ¥3,000");

        p.put("currency", "EUR");
        p.put("total", "42.505");
        assertThatThrownBy(() -> compose(p.toString()))
                .isInstanceOfSatisfying(RenderException.class, e -> assertThat(e.field()).isEqualTo("total"))
                .hasMessageContaining("more than 2 decimals");
    }

    @ParameterizedTest
    @ValueSource(strings = {"orderId", "customerEmail", "customerName", "currency", "total", "createdAt", "lines"})
    void aLegacyDocumentMissingAFieldFailsNamingIt(String field) throws Exception {
        ObjectNode p = tree(LEGACY);
        p.remove(field);
        assertThatThrownBy(() -> compose(p.toString()))
                .isInstanceOfSatisfying(RenderException.class, e -> assertThat(e.field()).isEqualTo(field))
                .hasMessageContaining("is missing");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sku", "name", "quantity", "unitPrice"})
    void aLegacyLineMissingAFieldIsNamedWithItsIndex(String field) throws Exception {
        ObjectNode p = tree(LEGACY);
        ObjectNode second = ((com.fasterxml.jackson.databind.node.ArrayNode) p.get("lines")).addObject();
        second.put("sku", "B2").put("name", "Plate").put("quantity", 1).put("unitPrice", "0.00");
        second.remove(field);
        assertThatThrownBy(() -> compose(p.toString()))
                .isInstanceOfSatisfying(RenderException.class, e -> assertThat(e.field()).isEqualTo("lines[1]." + field));
    }

    @Test
    void onlyADocumentWithoutVersionOnTheConfirmationTopicIsRead() throws Exception {
        LegacyOrderPayload reader = new LegacyOrderPayload();
        assertThat(reader.reads(LegacyOrderPayload.TOPIC, tree(LEGACY))).isTrue();
        assertThat(reader.reads("email.order_shipped", tree(LEGACY))).isFalse();
        assertThat(reader.reads(LegacyOrderPayload.TOPIC, tree("{\"v\":1}"))).isFalse();
    }
}
