package io.mailroom.outbox.maintenance;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Retention settings: the documented defaults, and every bad value rejected with its setting named. */
class RetentionConfigTest {

    @Test
    void defaults() {
        RetentionConfig c = RetentionConfig.defaults();
        assertThat(c.partitionsAhead()).isEqualTo(7);
        assertThat(c.hotRetention()).isEqualTo(Duration.ofDays(3));
        assertThat(c.historyRetention()).isEqualTo(Duration.ofDays(90));
        assertThat(c.auditRetention()).isEqualTo(Duration.ofDays(90));
        assertThat(c.historyBatchSize()).isEqualTo(1000);
        assertThat(c.lockTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.clock()).isNull();
        assertThat(c.toBuilder().build()).isEqualTo(c);
    }

    @Test
    void auditRetentionFollowsTheHistoryRetentionUnlessSet() {
        assertThat(RetentionConfig.builder().historyRetention(Duration.ofDays(30)).build().auditRetention())
                .isEqualTo(Duration.ofDays(30));
        assertThat(RetentionConfig.builder().historyRetention(Duration.ofDays(30)).auditRetention(Duration.ofDays(400))
                .build().auditRetention()).isEqualTo(Duration.ofDays(400));
    }

    @Test
    void badValuesAreRejectedNamingTheSetting() {
        rejects(b -> b.partitionsAhead(0), "partitionsAhead");
        rejects(b -> b.partitionsAhead(91), "partitionsAhead");
        rejects(b -> b.hotRetention(Duration.ofHours(12)), "hotRetention");
        rejects(b -> b.hotRetention(null), "hotRetention");
        rejects(b -> b.historyRetention(Duration.ofHours(12)), "historyRetention");
        rejects(b -> b.auditRetention(Duration.ZERO), "auditRetention");
        rejects(b -> b.historyBatchSize(0), "historyBatchSize");
        rejects(b -> b.historyBatchSize(100_001), "historyBatchSize");
        rejects(b -> b.historyMaxBatchesPerRun(0), "historyMaxBatchesPerRun");
        rejects(b -> b.lockTimeout(Duration.ZERO), "lockTimeout");
        rejects(b -> b.lockTimeout(Duration.ofSeconds(-1)), "lockTimeout");
        rejects(b -> b.lockTimeout(Duration.ofMinutes(1)), "lockTimeout");
        rejects(b -> b.statementTimeout(null), "statementTimeout");
        rejects(b -> b.freezeMinXidAge(-1), "freezeMinXidAge");
    }

    @Test
    void historyShorterThanTheHotRetentionIsAConflict() {
        assertThatThrownBy(() -> RetentionConfig.builder().hotRetention(Duration.ofDays(10))
                .historyRetention(Duration.ofDays(5)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("historyRetention")
                .hasMessageContaining("hotRetention");
    }

    private static void rejects(UnaryOperator<RetentionConfig.Builder> change, String setting) {
        assertThatThrownBy(() -> change.apply(RetentionConfig.builder()).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(setting + " must");
    }
}
