package io.mailroom.outbox;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A shell renames a library's settings to its own: whole names only, the longest first, others untouched. */
class InvalidSettingExceptionTest {

    @Test
    void renamedReplacesEachWholeNameAndTheSetting() {
        InvalidSettingException e = new InvalidSettingException("db keepalive",
                "db keepalive (1m) must be shorter than db max lifetime (1m); not db keepalives, nor the db keepalive's");
        InvalidSettingException r = e.renamed(Map.of("db keepalive", "KEEPALIVE_VAR", "db max lifetime", "LIFETIME_VAR",
                "db", "NEVER"));
        assertThat(r.setting()).isEqualTo("KEEPALIVE_VAR");
        assertThat(r.getMessage()).isEqualTo(
                "KEEPALIVE_VAR (1m) must be shorter than LIFETIME_VAR (1m); not NEVER keepalives, nor the KEEPALIVE_VAR's");
        assertThat(r.getCause()).isSameAs(e);
    }

    @Test
    void namesNotInTheMapStay() {
        InvalidSettingException e = new InvalidSettingException("port", "port must be 1..65535, got 0; $x\\1 stays");
        assertThat(e.renamed(Map.of()).getMessage()).isEqualTo(e.getMessage());
        InvalidSettingException r = e.renamed(Map.of("host", "HOST_VAR"));
        assertThat(r.setting()).isEqualTo("port");
        assertThat(r.getMessage()).isEqualTo(e.getMessage());
        assertThat(new InvalidSettingException(null, "port").renamed(Map.of("port", "$P\\")).getMessage()).isEqualTo("$P\\");
    }
}
