package io.mailroom.outbox;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one duration parser of settings, options and request parameters. */
class DurationsTest {

    @Test
    void shortFormsInEveryUnit() {
        assertThat(Durations.parse("s", "250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(Durations.parse("s", "30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("s", "5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(Durations.parse("s", "2h")).isEqualTo(Duration.ofHours(2));
        assertThat(Durations.parse("s", "1d")).isEqualTo(Duration.ofDays(1));
        assertThat(Durations.parse("s", "2w")).isEqualTo(Duration.ofDays(14));
        assertThat(Durations.parse("s", "0ms")).isZero();
        assertThat(Durations.parse("s", "0")).isZero();
    }

    @Test
    void caseSpacesAroundAndBetweenAreForgiven() {
        assertThat(Durations.parse("s", " 30S ")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("s", "10 s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse("s", "500MS")).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void isoEightySixOhOne() {
        assertThat(Durations.parse("s", "PT30S")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("s", "pt1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(Durations.parse("s", "P1DT2H")).isEqualTo(Duration.ofHours(26));
        assertThat(Durations.parse("s", "PT0.250S")).isEqualTo(Duration.ofMillis(250));
        assertThat(Durations.parse("s", "PT0S")).isZero();
    }

    @Test
    void theLargestShortFormFits() {
        assertThat(Durations.parse("s", "999999999999w")).isEqualTo(Duration.ofDays(7 * 999_999_999_999L));
    }

    @Test
    void garbageIsRefusedNamingTheSettingAndTheValue() {
        for (String bad : new String[]{"soon", "30", "1.5s", "-5s", "5 minutes", "1y", "s", "PT", "P1M", "30s;DROP",
                "9999999999999s", "PT99999999999999999999S"}) {
            assertThatThrownBy(() -> Durations.parse("MAILROOM_LEASE", bad)).as(bad)
                    .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("MAILROOM_LEASE"))
                    .hasMessage("MAILROOM_LEASE must be a duration like 500ms, 10s, 5m or PT10S, got '" + bad + "'");
        }
    }

    @Test
    void negativeIsoDurationsAreRefused() {
        for (String bad : new String[]{"PT-5S", "-PT5S", "P-1D"}) {
            assertThatThrownBy(() -> Durations.parse("--load", bad)).as(bad)
                    .isInstanceOf(InvalidSettingException.class)
                    .hasMessage("--load must not be negative, got '" + bad + "'");
        }
    }

    @Test
    void missingIsRequiredAndALongValueIsNotEchoedWhole() {
        assertThatThrownBy(() -> Durations.parse("MAILROOM_LEASE", null)).hasMessage("MAILROOM_LEASE is required");
        assertThatThrownBy(() -> Durations.parse("MAILROOM_LEASE", "  ")).hasMessage("MAILROOM_LEASE is required");
        String longValue = "x".repeat(500);
        assertThatThrownBy(() -> Durations.parse("MAILROOM_LEASE", longValue))
                .hasMessage("MAILROOM_LEASE must be a duration like 500ms, 10s, 5m or PT10S, got '" + "x".repeat(40) + "...'");
    }

    @Test
    void formatIsCompactAndReadsBack() {
        assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(Durations.format(Duration.ofSeconds(10))).isEqualTo("10s");
        assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(Durations.format(Duration.ofMinutes(2))).isEqualTo("2m");
        assertThat(Durations.format(Duration.ofMinutes(90))).isEqualTo("90m");
        assertThat(Durations.format(Duration.ofHours(3))).isEqualTo("3h");
        assertThat(Durations.format(Duration.ofDays(30))).isEqualTo("30d");
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0ms");
        assertThat(Durations.format(Duration.ofSeconds(-1))).isEqualTo("-1s");
        assertThat(Durations.format(null)).isEqualTo("null");
        for (Duration d : new Duration[]{Duration.ofMillis(1), Duration.ofMillis(61_000), Duration.ofHours(25), Duration.ofDays(7)}) {
            assertThat(Durations.parse("s", Durations.format(d))).isEqualTo(d);
        }
    }
}
