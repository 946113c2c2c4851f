package io.mailroom.outbox;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The network timeouts every pool gets: added to the JDBC URL unless the URL says otherwise, refused when they cannot work. */
class DbTimeoutsTest {

    @Test
    void theDefaultsGoIntoTheUrlButWhatTheUrlSaysWins() {
        assertThat(DbTimeouts.DEFAULTS.jdbcUrl("jdbc:postgresql://h/db")).isEqualTo(
                "jdbc:postgresql://h/db?connectTimeout=5&loginTimeout=10&socketTimeout=30&tcpKeepAlive=true");
        String own = DbTimeouts.DEFAULTS.jdbcUrl("jdbc:postgresql://h/db?user=u&SocketTimeout=50&tcpKeepAlive=false");
        assertThat(own).contains("SocketTimeout=50").doesNotContain("socketTimeout=30")
                .contains("tcpKeepAlive=false").doesNotContain("tcpKeepAlive=true").contains("&connectTimeout=5");
        assertThat(DbTimeouts.DEFAULTS.effectiveSocket("jdbc:postgresql://h/db?socketTimeout=50")).isEqualTo(Duration.ofSeconds(50));
        assertThat(DbTimeouts.DEFAULTS.effectiveSocket("jdbc:postgresql://h/db")).isEqualTo(DbTimeouts.DEFAULT_SOCKET);
    }

    @Test
    void settingsAreTakenByNameAndBadOnesAreRefusedNamingThem() {
        DbTimeouts t = DbTimeouts.of(Map.of(DbTimeouts.SETTING_SOCKET, Duration.ofSeconds(20),
                DbTimeouts.SETTING_ACQUIRE, Duration.ofSeconds(1))::get);
        assertThat(t.socket()).isEqualTo(Duration.ofSeconds(20));
        assertThat(t.acquire()).isEqualTo(Duration.ofSeconds(1));
        assertThat(t.validation()).isEqualTo(Duration.ofMillis(500));
        assertThat(t.connect()).isEqualTo(DbTimeouts.DEFAULT_CONNECT);
        assertThat(DbTimeouts.of(name -> null)).isEqualTo(DbTimeouts.DEFAULTS);
        assertThatThrownBy(() -> DbTimeouts.DEFAULTS.withSocket(Duration.ofMillis(1500)))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("db socket timeout must be whole seconds (pgjdbc's unit), got 1500ms");
        assertThatThrownBy(() -> DbTimeouts.DEFAULTS.withSocket(Duration.ZERO))
                .isInstanceOf(InvalidSettingException.class).hasMessage("db socket timeout must be at least 1s, got 0ms");
        assertThatThrownBy(() -> DbTimeouts.of(Map.of(DbTimeouts.SETTING_LOGIN, Duration.ofSeconds(2))::get))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("db login timeout (2s) covers the connect: it must be at least db connect timeout (5s)");
        assertThatThrownBy(() -> DbTimeouts.of(Map.of(DbTimeouts.SETTING_KEEPALIVE, Duration.ofSeconds(10))::get))
                .isInstanceOf(InvalidSettingException.class).hasMessageStartingWith("db keepalive must be at least 30s")
                .extracting(e -> ((InvalidSettingException) e).setting()).isEqualTo(DbTimeouts.SETTING_KEEPALIVE);
        assertThatThrownBy(() -> DbTimeouts.DEFAULTS.effectiveSocket("jdbc:postgresql://h/db?socketTimeout=1.5"))
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("socketTimeout in the JDBC URL must be whole seconds")
                .extracting(e -> ((InvalidSettingException) e).setting()).isEqualTo(DbTimeouts.SETTING_URL);
    }
}
