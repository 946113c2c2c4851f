package io.mailroom.outbox;

import io.mailroom.outbox.maintenance.RetentionConfig;
import io.mailroom.outbox.runtime.DispatcherConfig;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The shared validation of configuration: the exact messages are pinned, because they are what an
 * operator reads, and because {@link DispatcherConfig}, {@link RetentionConfig} and the services'
 * environment settings must say the same thing for the same mistake.
 */
class ChecksTest {

    @Test
    void rangeAcceptsItsBoundsAndNamesTheSettingOutsideThem() {
        assertThat(Checks.range("batchSize", 1, 1, 1000)).isEqualTo(1);
        assertThat(Checks.range("batchSize", 1000, 1, 1000)).isEqualTo(1000);
        assertThatThrownBy(() -> Checks.range("batchSize", 0, 1, 1000))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("batchSize"))
                .hasMessage("batchSize must be 1..1000, got 0");
        assertThatThrownBy(() -> Checks.range("MAILROOM_SMTP_PORT", 65536, 1, 65535))
                .hasMessage("MAILROOM_SMTP_PORT must be 1..65535, got 65536");
    }

    @Test
    void positiveRefusesNullZeroAndNegative() {
        assertThat(Checks.positive("lease", Duration.ofMillis(1))).isEqualTo(Duration.ofMillis(1));
        assertThatThrownBy(() -> Checks.positive("lease", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lease must be a positive duration, got null");
        assertThatThrownBy(() -> Checks.positive("lease", Duration.ZERO))
                .hasMessage("lease must be a positive duration, got 0ms");
        assertThatThrownBy(() -> Checks.positive("lease", Duration.ofSeconds(-1)))
                .hasMessage("lease must be a positive duration, got -1s");
    }

    @Test
    void notNegativeAcceptsZero() {
        assertThat(Checks.notNegative("MAILROOM_BULKHEAD_MAX_WAIT", Duration.ZERO)).isZero();
        assertThatThrownBy(() -> Checks.notNegative("MAILROOM_BULKHEAD_MAX_WAIT", Duration.ofMillis(-5)))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("MAILROOM_BULKHEAD_MAX_WAIT must not be negative, got -5ms");
        assertThatThrownBy(() -> Checks.notNegative("MAILROOM_BULKHEAD_MAX_WAIT", null))
                .hasMessage("MAILROOM_BULKHEAD_MAX_WAIT must not be negative, got null");
    }

    @Test
    void atMostAndAtLeastIncludeTheirBound() {
        assertThat(Checks.atMost("MAILROOM_HTTP_TIMEOUT", Duration.ofMinutes(5), Duration.ofMinutes(5)))
                .isEqualTo(Duration.ofMinutes(5));
        assertThatThrownBy(() -> Checks.atMost("MAILROOM_HTTP_TIMEOUT", Duration.ofMinutes(10), Duration.ofMinutes(5)))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("MAILROOM_HTTP_TIMEOUT must be at most 5m, got 10m");
        assertThatThrownBy(() -> Checks.atMost("MAILROOM_HTTP_TIMEOUT", null, Duration.ofMinutes(5)))
                .hasMessage("MAILROOM_HTTP_TIMEOUT must be at most 5m, got null");

        assertThat(Checks.atLeast("hotRetention", Duration.ofDays(1), Duration.ofDays(1), null)).isEqualTo(Duration.ofDays(1));
        assertThatThrownBy(() -> Checks.atLeast("hotRetention", Duration.ofHours(1), Duration.ofDays(1), "a day"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("hotRetention must be at least 1d, got 1h: a day");
        assertThatThrownBy(() -> Checks.atLeast("historyRetention", null, Duration.ofDays(1), null))
                .hasMessage("historyRetention must be at least 1d, got null");
    }

    @Test
    void requiredValuesAreNamed() {
        assertThat(Checks.notNull("MAILROOM_SMTP_FROM", "a@b")).isEqualTo("a@b");
        assertThat(Checks.notBlank("MAILROOM_SMTP_FROM", "a@b")).isEqualTo("a@b");
        assertThatThrownBy(() -> Checks.notNull("MAILROOM_SMTP_FROM", null))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("MAILROOM_SMTP_FROM"))
                .hasMessage("MAILROOM_SMTP_FROM is required");
        assertThatThrownBy(() -> Checks.notBlank("MAILROOM_SMTP_FROM", " \t")).hasMessage("MAILROOM_SMTP_FROM is required");
        assertThatThrownBy(() -> Checks.notBlank("MAILROOM_SMTP_FROM", null)).hasMessage("MAILROOM_SMTP_FROM is required");
    }
}
