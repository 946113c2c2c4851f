package io.mailroom.outbox;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The shared validation of the configuration builders: the exact messages are pinned, because they
 * are what an operator reads, and because {@link DispatcherConfig} and {@link RetentionConfig} must
 * say the same thing for the same mistake.
 */
class ChecksTest {

    @Test
    void rangeAcceptsItsBoundsAndNamesTheSettingOutsideThem() {
        assertThatCode(() -> Checks.range("batchSize", 1, 1, 1000)).doesNotThrowAnyException();
        assertThatCode(() -> Checks.range("batchSize", 1000, 1, 1000)).doesNotThrowAnyException();
        assertThatThrownBy(() -> Checks.range("batchSize", 0, 1, 1000)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("batchSize must be between 1 and 1000, got 0");
        assertThatThrownBy(() -> Checks.range("batchSize", 1001, 1, 1000))
                .hasMessage("batchSize must be between 1 and 1000, got 1001");
    }

    @Test
    void positiveRefusesNullZeroAndNegative() {
        assertThatCode(() -> Checks.positive("lease", Duration.ofMillis(1))).doesNotThrowAnyException();
        assertThatThrownBy(() -> Checks.positive("lease", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lease must be a positive duration, got null");
        assertThatThrownBy(() -> Checks.positive("lease", Duration.ZERO))
                .hasMessage("lease must be a positive duration, got PT0S");
        assertThatThrownBy(() -> Checks.positive("lease", Duration.ofSeconds(-1)))
                .hasMessage("lease must be a positive duration, got PT-1S");
    }

    @Test
    void atLeastGivesTheReasonWhenThereIsOne() {
        assertThatCode(() -> Checks.atLeast("hotRetention", Duration.ofDays(1), Duration.ofDays(1), null))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> Checks.atLeast("hotRetention", Duration.ofHours(1), Duration.ofDays(1), "a day"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("hotRetention must be at least PT24H, got PT1H: a day");
        assertThatThrownBy(() -> Checks.atLeast("historyRetention", null, Duration.ofDays(1), null))
                .hasMessage("historyRetention must be at least PT24H, got null");
    }
}
