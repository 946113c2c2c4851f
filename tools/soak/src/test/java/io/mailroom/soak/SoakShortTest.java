package io.mailroom.soak;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The CI version of the soak: a minute at half the measured capacity, with a 21 s long transaction in the middle. It proves
 * the tool runs and writes its record; it asserts no timing (this machine is shared and noisy),
 * only that every phase was sampled and nothing enqueued was lost.
 */
@Tag("short-run") // CI runs it as a step of its own: ./mvnw -B verify -P short-runs
class SoakShortTest {

    @Test
    void aShortSoakWritesItsRecordAndLosesNothing() throws Exception {
        Path out = Path.of("target", "soak-ci");
        SoakRun.Result r = SoakRun.run(Duration.ofSeconds(60), 0.3, 0.35, 0.5, Duration.ofSeconds(3), out, 5000, "10s", null);
        assertThat(r.capacity()).isPositive();
        assertThat(r.samples()).extracting(SoakRun.Sample::phase).contains("before", "long_txn", "after");
        assertThat(r.enqueued()).isPositive();
        assertThat(r.done()).as("every enqueued message was handled").isEqualTo(r.enqueued());
        assertThat(Files.readAllLines(out.resolve("soak.csv"))).hasSize(r.samples().size() + 1);
        // the server's WAL and the partitions' vacuums are read at every sample, and only grow
        assertThat(r.samples().getLast().walRecords()).isGreaterThan(r.samples().getFirst().walRecords());
        assertThat(r.samples().getLast().walFullPages()).isGreaterThanOrEqualTo(r.samples().getFirst().walFullPages());
        assertThat(r.samples().getLast().autovacuums()).isGreaterThanOrEqualTo(r.samples().getFirst().autovacuums());
        assertThat(Files.size(out.resolve("soak.png"))).isPositive();
        assertThat(Files.readString(out.resolve("soak.md"))).contains("worst during the long transaction")
                .contains("claim p99, median of the samples").contains("throughput in each minute of the long transaction");
    }

    @Test
    void optionsAreParsedAndBadOnesNamed() {
        // durations: io.mailroom.outbox.Durations, tested there
        assertThat(SoakRun.percent("30%")).isEqualTo(0.3);
        assertThatThrownBy(() -> SoakRun.percent("150%")).hasMessageContaining("150%");
    }
}
