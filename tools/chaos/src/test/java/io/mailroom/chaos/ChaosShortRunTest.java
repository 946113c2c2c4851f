package io.mailroom.chaos;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short chaos runs, as CI runs them: three {@code mailroom dispatcher run} processes, the
 * fault-injecting provider (HTTP) or SMTP sink (review mode), an order writer, {@code kill -9}s,
 * {@code pg_terminate_backend} rounds and an outage. Every check of {@link ChaosCheck} must hold;
 * the test also makes sure the faults really happened, so a run that injected nothing cannot pass.
 * The tables land in {@code target/chaos-summary.md} and {@code target/chaos-summary-smtp.md}.
 */
@Tag("short-run") // CI runs it as a step of its own: ./mvnw -B verify -P short-runs
class ChaosShortRunTest {

    @Test
    void httpProviderWithFaultsLosesNothingAndDoublesNothing() throws Exception {
        ChaosOptions options = ChaosOptions.shortRun(ChaosOptions.Transport.HTTP).withWorkDir(Path.of("target", "chaos-http"));
        ChaosReport report = new ChaosRun(options).run();

        assertThat(report.violations()).as(report.markdown()).isEmpty();
        assertThat(report.count("messages")).isGreaterThan(500);
        assertThat(report.count("sent") + report.count("failed") + report.count("in review")).isEqualTo(report.count("messages"));
        assertThat(report.count("lost")).isZero();
        assertThat(report.count("duplicated")).isZero();
        assertThat(report.count("faults: kill -9 of a dispatcher")).isPositive();
        assertThat(report.count("faults: provider accepted, never answered in time")).isPositive();
        assertThat(report.count("ambiguous sends")).isPositive();
    }

    @Test
    void smtpSinkWithFaultsInReviewModeDeliversNoKeyTwiceAndParksEveryAmbiguousSend() throws Exception {
        ChaosOptions options = ChaosOptions.shortRun(ChaosOptions.Transport.SMTP).withWorkDir(Path.of("target", "chaos-smtp"));
        ChaosReport report = new ChaosRun(options).run();

        assertThat(report.violations()).as(report.markdown()).isEmpty();
        assertThat(report.count("messages")).isGreaterThan(300);
        assertThat(report.count("sent") + report.count("failed") + report.count("in review")).isEqualTo(report.count("messages"));
        assertThat(report.count("duplicated")).isZero();
        assertThat(report.count("faults: SMTP delivered, connection dropped before the reply")).isPositive();
        assertThat(report.count("in review")).as("the dropped answers parked their messages").isPositive();
    }
}
