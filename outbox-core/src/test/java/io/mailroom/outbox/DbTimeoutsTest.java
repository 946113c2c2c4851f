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
    void settingsAreReadByNameAndBadOnesAreRefusedNamingThem() {
        DbTimeouts t = DbTimeouts.fromSettings(Map.of("MAILROOM_DB_SOCKET_TIMEOUT", "20s", "MAILROOM_DB_ACQUIRE_TIMEOUT", "1s")::get);
        assertThat(t.socket()).isEqualTo(Duration.ofSeconds(20));
        assertThat(t.acquire()).isEqualTo(Duration.ofSeconds(1));
        assertThat(t.validation()).isEqualTo(Duration.ofMillis(500));
        assertThat(t.connect()).isEqualTo(DbTimeouts.DEFAULT_CONNECT);
        assertThatThrownBy(() -> DbTimeouts.fromSettings(Map.of("MAILROOM_DB_SOCKET_TIMEOUT", "1500ms")::get))
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("MAILROOM_DB_SOCKET_TIMEOUT").hasMessageContaining("whole seconds");
        assertThatThrownBy(() -> DbTimeouts.fromSettings(Map.of("MAILROOM_DB_SOCKET_TIMEOUT", "0")::get))
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("MAILROOM_DB_SOCKET_TIMEOUT");
        assertThatThrownBy(() -> DbTimeouts.fromSettings(Map.of("MAILROOM_DB_LOGIN_TIMEOUT", "2s")::get))
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("MAILROOM_DB_CONNECT_TIMEOUT");
        assertThatThrownBy(() -> DbTimeouts.fromSettings(Map.of("MAILROOM_DB_KEEPALIVE", "10s")::get))
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("MAILROOM_DB_KEEPALIVE");
    }
}
