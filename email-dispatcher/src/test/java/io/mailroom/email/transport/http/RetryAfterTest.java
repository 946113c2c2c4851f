package io.mailroom.email.transport.http;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class RetryAfterTest {

    static final Instant NOW = Instant.parse("2026-12-02T10:00:00Z");

    @Test
    void parsesDelaySeconds() {
        assertThat(RetryAfter.parse("30", NOW)).isEqualTo(Duration.ofSeconds(30));
        assertThat(RetryAfter.parse(" 0 ", NOW)).isEqualTo(Duration.ZERO);
    }

    @Test
    void parsesHttpDates() {
        assertThat(RetryAfter.parse("Wed, 02 Dec 2026 10:01:30 GMT", NOW)).isEqualTo(Duration.ofSeconds(90));
        assertThat(RetryAfter.parse("Wed, 02 Dec 2026 09:00:00 GMT", NOW)).isEqualTo(Duration.ZERO);
    }

    @Test
    void capsAbsurdValuesAndIgnoresGarbage() {
        assertThat(RetryAfter.parse("99999999999", NOW)).isEqualTo(RetryAfter.MAX);
        assertThat(RetryAfter.parse("604800", NOW)).isEqualTo(RetryAfter.MAX);
        assertThat(RetryAfter.parse("-5", NOW)).isNull();
        assertThat(RetryAfter.parse("soon", NOW)).isNull();
        assertThat(RetryAfter.parse("", NOW)).isNull();
        assertThat(RetryAfter.parse(null, NOW)).isNull();
    }
}
