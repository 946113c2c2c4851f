package io.mailroom.orders;

import io.mailroom.outbox.runtime.ConnectionBudget;
import io.mailroom.testing.PostgresExtension;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The runnable service end to end: creates a database that does not exist yet, migrates it, opens
 * its pool, serves a POST, and closes cleanly. The database is dropped afterwards; its name carries
 * the test harness's prefix and timestamp so a killed run's leftover is cleaned up like any test database.
 */
class OrderServiceAppTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void aPoolLargerThanTheServersFreeSlotsIsRefusedAtStartNamingTheNumbers() {
        int maxConnections = pg.dsl().fetchSingle("SELECT current_setting('max_connections')::int").get(0, Integer.class);
        assertThat(maxConnections).as("the test needs a pool the config accepts").isLessThan(OrderServiceConfig.MAX_POOL_SIZE);
        OrderServiceConfig config = new OrderServiceConfig(pg.database().jdbcUrl(), pg.database().user(), pg.database().password(),
                false, false, maxConnections + 1, HttpSettings.of("127.0.0.1", 0));

        assertThatThrownBy(() -> OrderServiceApp.start(config)).isInstanceOf(ConnectionBudget.Exhausted.class)
                .hasMessageContaining("max_connections " + maxConnections)
                .hasMessageContaining("superuser_reserved_connections ")
                .hasMessageContaining("sessions of other clients in pg_stat_activity")
                .hasMessageContaining("needs " + (maxConnections + 1))
                .hasMessageContaining(OrderServiceConfig.ENV_DB_POOL_SIZE);
        // the pool was not filled before the check
        await().atMost(Duration.ofSeconds(10)).until(() -> pg.dsl().fetchSingle("SELECT count(*)::int FROM pg_stat_activity"
                + " WHERE datname = current_database() AND application_name LIKE 'mailroom-orders-%'").get(0, Integer.class) == 0);
    }

    @Test
    void createsMigratesServesAndStops() throws Exception {
        String name = "mt_" + (System.currentTimeMillis() / 1000) + "_app"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt() & 0xffff);
        OrderServiceConfig config = OrderServiceConfig.defaults()
                .withJdbcUrl(pg.database().jdbcUrl())
                .withCredentials(pg.database().user(), pg.database().password());
        config = config.withJdbcUrl(config.jdbcUrlFor(name))
                .withCreateDatabase(true)
                .withMigrate(true)
                .withHttp(HttpSettings.of("127.0.0.1", 0));
        try {
            OrderServiceApp app = OrderServiceApp.start(config);
            try {
                HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(app.server().baseUri().resolve("/orders"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(OrderFixtures.SAMPLE_JSON)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).isEqualTo(201);
                var dsl = DSL.using(app.dataSource(), SQLDialect.POSTGRES);
                assertThat(dsl.fetchCount(ORDERS)).isEqualTo(1);
                assertThat(dsl.fetchCount(OUTBOX_MESSAGE)).isEqualTo(1);
                assertThat(dsl.fetchValue("select current_database()")).isEqualTo(name);
            } finally {
                app.close();
                app.close(); // idempotent
            }

            // a second start finds the database and the schema in place
            OrderServiceApp again = OrderServiceApp.start(config);
            try {
                assertThat(DSL.using(again.dataSource(), SQLDialect.POSTGRES).fetchCount(ORDERS)).isEqualTo(1);
            } finally {
                again.close();
            }
        } finally {
            try (Connection admin = pg.newConnection(); Statement st = admin.createStatement()) {
                st.execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
            }
        }
    }
}
