package io.mailroom.orders;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Reading, checking and printing the order service's configuration; no database. */
class OrderServiceConfigTest {

    @Test
    void emptyEnvironmentGivesTheDefaults() {
        OrderServiceConfig config = OrderServiceConfig.fromEnvironment(Map.of());
        assertThat(config).isEqualTo(OrderServiceConfig.defaults());
        assertThat(config.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:5432/mailroom?user=postgres");
        assertThat(config.databaseName()).isEqualTo("mailroom");
        assertThat(config.migrate()).isTrue();
        assertThat(config.createDatabase()).isFalse();
        assertThat(config.http().port()).isEqualTo(8081);
        assertThat(config.http().host()).isEqualTo("0.0.0.0");
    }

    @Test
    void everyVariableIsRead() {
        OrderServiceConfig config = OrderServiceConfig.fromEnvironment(Map.of(
                "MAILROOM_DB_URL", "jdbc:postgresql://db:5433/shop?sslmode=disable",
                "MAILROOM_DB_USER", "shop",
                "MAILROOM_DB_PASSWORD", " s3cret ",
                "MAILROOM_DB_CREATE", "TRUE",
                "MAILROOM_MIGRATE", "false",
                "MAILROOM_DB_POOL_SIZE", "4",
                "MAILROOM_ORDERS_HOST", "127.0.0.1",
                "MAILROOM_ORDERS_PORT", "0",
                "MAILROOM_ORDERS_MAX_BODY_BYTES", "2048",
                "MAILROOM_ORDERS_HTTP_THREADS", "16"));
        assertThat(config).isEqualTo(new OrderServiceConfig("jdbc:postgresql://db:5433/shop?sslmode=disable", "shop",
                " s3cret ", true, false, 4, new HttpSettings("127.0.0.1", 0, 2048, 16)));
        assertThat(config.jdbcUrlFor("postgres")).isEqualTo("jdbc:postgresql://db:5433/postgres?sslmode=disable");
    }

    @Test
    void emptyValuesMeanTheDefault() {
        assertThat(OrderServiceConfig.fromEnvironment(Map.of("MAILROOM_ORDERS_PORT", "", "MAILROOM_DB_USER", "")))
                .isEqualTo(OrderServiceConfig.defaults());
    }

    @ParameterizedTest(name = "[{index}] {0}={1}")
    @CsvSource(delimiter = '|', value = {
            "MAILROOM_ORDERS_PORT           | 70000       | MAILROOM_ORDERS_PORT",
            "MAILROOM_ORDERS_PORT           | -1          | MAILROOM_ORDERS_PORT",
            "MAILROOM_ORDERS_PORT           | http        | MAILROOM_ORDERS_PORT",
            "MAILROOM_ORDERS_HOST           | ' '         | MAILROOM_ORDERS_HOST",
            "MAILROOM_ORDERS_MAX_BODY_BYTES | 10          | MAILROOM_ORDERS_MAX_BODY_BYTES",
            "MAILROOM_ORDERS_HTTP_THREADS   | 2           | MAILROOM_ORDERS_HTTP_THREADS",
            "MAILROOM_DB_POOL_SIZE          | 0           | MAILROOM_DB_POOL_SIZE",
            "MAILROOM_DB_CREATE             | yes         | MAILROOM_DB_CREATE",
            "MAILROOM_MIGRATE               | 1           | MAILROOM_MIGRATE",
            "MAILROOM_DB_URL                | jdbc:mysql://h/db | MAILROOM_DB_URL",
            "MAILROOM_DB_URL                | jdbc:postgresql://h:5432/ | MAILROOM_DB_URL",
            "MAILROOM_DB_SOCKET_TIMEOUT     | 1500ms      | MAILROOM_DB_SOCKET_TIMEOUT must be whole seconds",
            "MAILROOM_DB_LOGIN_TIMEOUT      | 2s          | at least MAILROOM_DB_CONNECT_TIMEOUT (5s)",
            "MAILROOM_DB_KEEPALIVE          | soon        | MAILROOM_DB_KEEPALIVE must be a duration",
    })
    void badValuesAreRejectedNamingTheVariable(String variable, String value, String named) {
        assertThatThrownBy(() -> OrderServiceConfig.fromEnvironment(Map.of(variable, value)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(named);
    }

    @Test
    void toStringMasksPasswords() {
        OrderServiceConfig config = OrderServiceConfig.defaults()
                .withJdbcUrl("jdbc:postgresql://db/shop?user=u&password=hunter2&ssl=true")
                .withCredentials("shop", "s3cret");
        String printed = config.toString();
        assertThat(printed).doesNotContain("hunter2").doesNotContain("s3cret");
        assertThat(printed).contains("password=****&ssl=true").contains("dbUser=shop").contains("dbPassword=****");
    }

    @Test
    void invalidUrlIsReportedWithoutItsPassword() {
        assertThatThrownBy(() -> OrderServiceConfig.defaults().withJdbcUrl("jdbc:postgresql://db?password=hunter2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MAILROOM_DB_URL")
                .hasMessageNotContaining("hunter2");
    }
}
