package io.mailroom.orders;

import io.mailroom.testing.PgBouncer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The order service behind PgBouncer in transaction mode ({@code MAILROOM_DB_POOLER=pgbouncer}):
 * its settings are checked, and the service started through a pgbouncer process of its own (Flyway
 * over a direct URL) takes more orders than pgjdbc's prepare threshold without a prepared-statement error.
 */
class OrderServicePgBouncerTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void poolerSettingsAreValidatedNamingTheVariable() {
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_DB_POOLER", "odyssey");
        assertThatThrownBy(() -> OrderPooler.fromEnvironment(env, false)).hasMessageContaining("MAILROOM_DB_POOLER");
        env.put("MAILROOM_DB_POOLER", "pgbouncer");
        assertThatThrownBy(() -> OrderPooler.fromEnvironment(env, true)).hasMessageContaining("MAILROOM_MIGRATE_DB_URL");
        env.put("MAILROOM_MIGRATE_DB_URL", "postgres://x");
        assertThatThrownBy(() -> OrderPooler.fromEnvironment(env, true)).hasMessageContaining("MAILROOM_MIGRATE_DB_URL");
        env.put("MAILROOM_MIGRATE_DB_URL", "jdbc:postgresql://db/shop?password=s3cret");
        OrderPooler pooler = OrderPooler.fromEnvironment(env, true);
        assertThat(pooler.pooled()).isTrue();
        assertThat(pooler.toString()).doesNotContain("s3cret");
        assertThat(OrderPooler.fromEnvironment(Map.of(), true)).isEqualTo(OrderPooler.DIRECT);
    }

    @Test
    void ordersThroughPgBouncerAreStoredWithTheirOutboxMessage() throws Exception {
        assumeThat(PgBouncer.binary()).as("pgbouncer is not installed (apt-get install pgbouncer): test skipped").isPresent();
        URI uri = URI.create(pg.jdbcUrl().substring("jdbc:".length()));
        String user = String.valueOf(pg.dsl().fetchValue("SELECT current_user"));
        try (PgBouncer bouncer = PgBouncer.start(uri.getHost(), uri.getPort(), pg.database().name(), user, 4)) {
            OrderServiceConfig config = new OrderServiceConfig(bouncer.jdbcUrlDefaults(), null, null, false, true, 8,
                    HttpSettings.of("127.0.0.1", 0));
            OrderServiceApp app = OrderServiceApp.start(config, new OrderPooler(true, pg.database().jdbcUrlWithCredentials()));
            int n = 12;
            try {
                HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                for (int i = 0; i < n; i++) {
                    HttpResponse<String> response = http.send(HttpRequest.newBuilder(app.server().baseUri().resolve("/orders"))
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(OrderFixtures.SAMPLE_JSON)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
                }
            } finally {
                app.close();
            }
            assertThat(pg.dsl().fetchCount(ORDERS)).isEqualTo(n);
            assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE)).isEqualTo(n);
        }
    }
}
