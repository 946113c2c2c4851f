package io.mailroom.email.resilience;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The breaker states a dispatcher reports in the registry read back as written, and nothing else read as one. */
class BreakerReportTest {

    @Test
    void aReportReadsBackAsWritten() {
        List<BreakerReport.State> states = List.of(new BreakerReport.State("smtp", "closed"),
                new BreakerReport.State("http", "half_open"));
        String json = BreakerReport.json(states);
        assertThat(json).isEqualTo("{\"transports\":[{\"name\":\"smtp\",\"breaker\":\"closed\"},"
                + "{\"name\":\"http\",\"breaker\":\"half_open\"}]}");
        assertThat(BreakerReport.parse(json)).isEqualTo(states);
        // as PostgreSQL gives jsonb back: spaces added
        assertThat(BreakerReport.parse("{\"transports\": [{\"name\": \"smtp\", \"breaker\": \"OPEN\"}]}"))
                .containsExactly(new BreakerReport.State("smtp", "open"));
    }

    @Test
    void anythingElseReadsAsNoTransport() {
        assertThat(BreakerReport.parse(null)).isEmpty();
        assertThat(BreakerReport.parse("{")).isEmpty();
        assertThat(BreakerReport.parse("[]")).isEmpty();
        assertThat(BreakerReport.parse("{\"transports\": {}}")).isEmpty();
        assertThat(BreakerReport.parse("{\"transports\": [{\"breaker\": \"open\"}, 3, {\"name\": \"http\"}]}"))
                .containsExactly(new BreakerReport.State("http", "unknown"));
    }
}
