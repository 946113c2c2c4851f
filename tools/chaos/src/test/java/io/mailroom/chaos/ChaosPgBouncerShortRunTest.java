package io.mailroom.chaos;

import io.mailroom.testing.PgBouncer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The short chaos run through PgBouncer in transaction mode (a process of the run's own): the
 * three dispatcher processes ({@code MAILROOM_DB_POOLER=pgbouncer}, LISTEN direct) and the order
 * writer go through it; kill -9s, session kills and provider faults as in the plain run. Nothing
 * lost or doubled. Skipped, saying why, without the pgbouncer binary.
 */
@Tag("short-run") // CI runs it as a step of its own: ./mvnw -B verify -P short-runs
class ChaosPgBouncerShortRunTest {

    @Test
    void httpProviderWithFaultsThroughPgBouncerLosesNothingAndDoublesNothing() throws Exception {
        assumeThat(PgBouncer.binary()).as("pgbouncer is not installed (apt-get install pgbouncer): chaos run through it skipped")
                .isPresent();
        ChaosOptions options = ChaosOptions.shortRun(ChaosOptions.Transport.HTTP)
                .withLoad(Duration.ofSeconds(30), Duration.ofSeconds(10), Duration.ofSeconds(6))
                .withWorkDir(Path.of("target", "chaos-http-pgbouncer"));
        ChaosReport report = new ChaosRun(options, true).run();

        assertThat(report.violations()).as(report.markdown()).isEmpty();
        assertThat(report.markdown()).contains("through PgBouncer");
        assertThat(report.count("messages")).isGreaterThan(300);
        assertThat(report.count("sent") + report.count("failed") + report.count("in review")).isEqualTo(report.count("messages"));
        assertThat(report.count("lost")).isZero();
        assertThat(report.count("duplicated")).isZero();
        assertThat(report.count("faults: kill -9 of a dispatcher")).isPositive();
        assertThat(report.count("faults: provider accepted, never answered in time")).isPositive();
    }
}
