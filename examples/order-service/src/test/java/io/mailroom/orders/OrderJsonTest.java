package io.mailroom.orders;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Strict binding of request bodies and the field named for each kind of binding error; no database. */
class OrderJsonTest {

    @Test
    void bindsTheSample() {
        PlaceOrder order = OrderJson.readPlaceOrder(OrderFixtures.SAMPLE_JSON.getBytes(StandardCharsets.UTF_8));
        assertThat(order).isEqualTo(OrderFixtures.sample());
        assertThat(order.lines().get(1).unitPrice()).isEqualTo(new BigDecimal("10"));
    }

    @Test
    void missingFieldsBindAsNullAndAreLeftToValidation() {
        PlaceOrder order = OrderJson.readPlaceOrder("{\"lines\": [{}]}".getBytes(StandardCharsets.UTF_8));
        assertThat(order.customerEmail()).isNull();
        assertThat(order.lines()).containsExactly(new PlaceOrder.Line(null, null, null, null));
    }

    @Test
    void utf16BodiesAreDetected() {
        PlaceOrder order = OrderJson.readPlaceOrder(OrderFixtures.SAMPLE_JSON.getBytes(StandardCharsets.UTF_16BE));
        assertThat(order).isEqualTo(OrderFixtures.sample());
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            // malformed documents: the body as a whole
            "{                                                   | body",
            "`{\"customerEmail\": \"a@b.co\",}`                  | body",
            "`{\"customerEmail\": 'a@b.co'}`                     | body",
            "``                                                  | body",
            "[]                                                  | body",
            "`\"an order\"`                                      | body",
            "null                                                | body",
            "`{\"currency\": \"EUR\"} {\"currency\": \"EUR\"}`   | body",
            "`{\"currency\": \"EUR\", \"currency\": \"USD\"}`    | body",
            // unknown fields, at any depth
            "`{\"total\": \"0.01\"}`                             | total",
            "`{\"lines\": [{\"sku\": \"S\", \"discount\": 5}]}`  | lines[0].discount",
            // wrong types
            "`{\"customerEmail\": 42}`                           | customerEmail",
            "`{\"customerEmail\": {}}`                           | customerEmail",
            "`{\"customerName\": true}`                          | customerName",
            "`{\"currency\": [\"EUR\"]}`                         | currency",
            "`{\"lines\": {}}`                                   | lines",
            "`{\"lines\": \"SKU-1\"}`                            | lines",
            "`{\"lines\": \"\"}`                                 | lines",
            "`{\"lines\": [\"SKU-1\"]}`                          | lines[0]",
            "`{\"lines\": [{\"quantity\": \"2\"}]}`              | lines[0].quantity",
            "`{\"lines\": [{\"quantity\": \"two\"}]}`            | lines[0].quantity",
            "`{\"lines\": [{\"quantity\": 2.5}]}`                | lines[0].quantity",
            "`{\"lines\": [{\"quantity\": true}]}`               | lines[0].quantity",
            "`{\"lines\": [{\"quantity\": 99999999999}]}`        | lines[0].quantity",
            "`{\"lines\": [{}, {\"unitPrice\": \"4.25\"}]}`      | lines[1].unitPrice",
            "`{\"lines\": [{\"unitPrice\": [4.25]}]}`            | lines[0].unitPrice",
    })
    void bindingErrorsNameTheField(String body, String field) {
        assertThatThrownBy(() -> OrderJson.readPlaceOrder(body.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo(field));
    }

    @Test
    void invalidUtf8InAValueNamesThatField() {
        byte[] body = {'{', '"', 'c', 'u', 's', 't', 'o', 'm', 'e', 'r', 'N', 'a', 'm', 'e', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};
        assertThatThrownBy(() -> OrderJson.readPlaceOrder(body))
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("customerName"));
    }

    @Test
    void invalidUtf8OutsideAValueIsABodyError() {
        byte[] body = {'{', '"', (byte) 0xFF, '"', ':', '1', '}'};
        assertThatThrownBy(() -> OrderJson.readPlaceOrder(body))
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("body"));
    }

    @Test
    void documentWritesMoneyAsDecimalStrings() throws Exception {
        OrderDocument doc = new OrderDocument(7, "a@b.co", "A", "EUR", OrderDocument.money(new BigDecimal("1E+2")),
                "2025-01-31T09:15:00.123456Z",
                List.of(new OrderDocument.Line(1, "S", "N", 1, OrderDocument.money(new BigDecimal("100")),
                        OrderDocument.money(new BigDecimal("100.0")))), "en", OrderDocument.PLACED);
        JsonNode json = OrderJson.mapper().readTree(OrderJson.mapper().writeValueAsString(doc));
        assertThat(json.get("total").isTextual()).isTrue();
        assertThat(json.get("total").asText()).isEqualTo("100.00");
        assertThat(json.get("lines").get(0).get("unitPrice").asText()).isEqualTo("100.00");
        assertThat(json.get("lines").get(0).get("lineTotal").asText()).isEqualTo("100.00");
        assertThat(json.get("orderId").asLong()).isEqualTo(7);
    }
}
