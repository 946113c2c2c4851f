package io.mailroom.email;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.mailroom.email.transport.http.JsonMailApiAdapter;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The library's one mapper: as strict as the composer needs where it reads payloads, lenient where the library only looks into JSON. */
class EmailJsonTest {

    @Test
    void theMapperIsTheComposersStrictOne() throws Exception {
        assertThatThrownBy(() -> EmailJson.strict().readTree("{\"a\":1,\"a\":2}")).isInstanceOf(JsonProcessingException.class);
        assertThatThrownBy(() -> EmailJson.strict().readTree("{\"a\":1} {}")).isInstanceOf(JsonProcessingException.class);
        assertThat(EmailJson.strict().readTree("{\"a\":0.1}").get("a").isBigDecimal()).isTrue();
        assertThat(EmailJson.mapper().convertValue(EmailJson.strict().readTree("{\"a\":0.1}"), Map.class).get("a"))
                .isEqualTo(new BigDecimal("0.1"));
        Map<String, Object> unordered = new LinkedHashMap<>();
        unordered.put("b", 1);
        unordered.put("a", 2);
        assertThat(EmailJson.mapper().writeValueAsString(unordered)).isEqualTo("{\"a\":2,\"b\":1}");
    }

    @Test
    void whatTheLibraryOnlyLooksIntoIsReadLeniently() throws Exception {
        assertThat(EmailJson.mapper().readTree("{\"a\":1,\"a\":2} x").get("a").asInt()).isEqualTo(2);
        JsonMailApiAdapter adapter = new JsonMailApiAdapter(URI.create("https://api.example"), "token");
        assertThat(adapter.messageId("{\"id\":\"first\",\"id\":\"msg-1\"}")).isEqualTo("msg-1");
        assertThat(adapter.messageId("{\"id\":\"msg-2\"}\n")).isEqualTo("msg-2");
    }
}
