package io.mailroom.support;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The allow-lists every typed value passes through. */
class ParamsTest {

    private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");

    @Test
    void timesAreIsoInstantsOffsetsOrTimesAgo() {
        assertThat(Params.time("since", "2025-01-31T09:15:00Z", NOW)).isEqualTo(Instant.parse("2025-01-31T09:15:00Z"));
        assertThat(Params.time("since", "2025-01-31T10:15:00+01:00", NOW)).isEqualTo(Instant.parse("2025-01-31T09:15:00Z"));
        assertThat(Params.time("since", "1h", NOW)).isEqualTo(NOW.minus(Duration.ofHours(1)));
        assertThat(Params.time("since", "2d", NOW)).isEqualTo(NOW.minus(Duration.ofDays(2)));
        assertThat(Params.time("since", "  ", NOW)).isNull();
        for (String bad : new String[]{"yesterday", "1y", "-1h", "2025-01-31", "9999999999h", "1h; DROP TABLE x"}) {
            assertThatThrownBy(() -> Params.time("since", bad, NOW)).as(bad)
                    .isInstanceOfSatisfying(InvalidParameterException.class, e -> assertThat(e.parameter()).isEqualTo("since"));
        }
    }

    @Test
    void durationsKeysOrdersAndScopes() {
        assertThat(Params.duration("olderThan", "30m")).isEqualTo(Duration.ofMinutes(30));
        assertThat(Params.duration("olderThan", "PT1H30M")).isEqualTo(Duration.ofMinutes(90));
        assertThatThrownBy(() -> Params.duration("olderThan", "PT0S")).isInstanceOf(InvalidParameterException.class);
        assertThat(Params.orderId("orderId", " 102 ")).isEqualTo("102");
        assertThatThrownBy(() -> Params.orderId("orderId", "0102")).isInstanceOf(InvalidParameterException.class);
        assertThat(Params.key("key", "email-order-102-resend-1")).isEqualTo("email-order-102-resend-1");
        assertThatThrownBy(() -> Params.key("key", "-starts-with-dash")).isInstanceOf(InvalidParameterException.class);
        assertThatThrownBy(() -> Params.key("key", "has space")).isInstanceOf(InvalidParameterException.class);
        assertThat(Params.scope("scope", null)).isEqualTo("*");
        assertThat(Params.scope("scope", "email.order_confirmation")).isEqualTo("email.order_confirmation");
        assertThat(Params.reason("reason", "  line one\nline two  ", true)).isEqualTo("line one\nline two");
        assertThatThrownBy(() -> Params.reason("reason", "bidi \u202e trick", true)).isInstanceOf(InvalidParameterException.class);
    }

    @Test
    void durationsAreReadByTheSharedParserAndBoundedHere() {
        assertThat(Params.duration("olderThan", "2w")).isEqualTo(Duration.ofDays(14));
        assertThat(Params.duration("olderThan", "P2D")).isEqualTo(Duration.ofDays(2));
        assertThat(Params.duration("olderThan", null)).isNull();
        for (String bad : new String[]{"0", "30", "-PT1H", "PT-1H", "soon", "3661d", "9999999999h", "x".repeat(41)}) {
            assertThatThrownBy(() -> Params.duration("olderThan", bad)).as(bad)
                    .isInstanceOfSatisfying(InvalidParameterException.class, e -> assertThat(e.parameter()).isEqualTo("olderThan"))
                    .satisfies(e -> assertThat(e.getMessage()).as("a typed value is not echoed").doesNotContain("'" + bad + "'"));
        }
    }

    @Test
    void cursorsRoundTripAndForgedOnesAreRefused() {
        Cursor c = new Cursor(Instant.parse("2030-01-01T10:00:00.123456Z"), "email-order-7");
        assertThat(Cursor.decode("cursor", c.encode())).isEqualTo(c);
        String forged = java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString("2030-01-01T10:00:00Z|x' OR 1=1".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThatThrownBy(() -> Cursor.decode("cursor", forged)).isInstanceOf(InvalidParameterException.class);
    }
}
