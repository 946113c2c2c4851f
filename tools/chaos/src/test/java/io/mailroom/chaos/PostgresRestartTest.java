package io.mailroom.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.db.Schema;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.email.service.DispatcherService;
import io.mailroom.email.service.ServiceConfig;
import io.mailroom.orders.OrderService;
import io.mailroom.orders.PlaceOrder;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The PostgreSQL server restarting under running dispatchers: an embedded PostgreSQL of this test's
 * own (never the shared server), stopped and started again on the same port and data directory
 * while two dispatcher services send to the provider stub. They reconnect by themselves: every
 * order committed before, during (none can be) and after the restart gets exactly one email.
 */
class PostgresRestartTest {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(PostgresRestartTest.class);

    @TempDir
    Path temp;

    private EmbeddedPostgres postgres;
    private int port;
    private Path data;
    private ProviderStub provider;
    private final List<DispatcherService> dispatchers = new ArrayList<>();
    private HikariDataSource orders;
    private final AtomicInteger connectionErrors = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        port = DispatcherFleet.freePort();
        data = temp.resolve("pg");
        postgres = startPostgres();
        orders = pool();
        Schema.migrate(orders);
        io.mailroom.orders.ShopSchema.migrate(orders);
        provider = ProviderStub.start(ProviderStub.Settings.wellBehaved("tok_restart", temp.resolve("provider.rec")));
        DispatcherListener listener = new DispatcherListener() {
            @Override
            public void error(String where, Throwable error) {
                if (SqlStates.isConnectionLoss(error)) {
                    connectionErrors.incrementAndGet();
                }
            }
        };
        for (int i = 1; i <= 2; i++) {
            Map<String, String> env = new HashMap<>();
            env.put("MAILROOM_TEMPLATES_DIR", io.mailroom.orders.ShopTemplates.temporaryCopy().toString()); // the shop's templates
            env.put("MAILROOM_DB_URL", jdbcUrl() + "&ApplicationName=restart-d" + i);
            env.put("MAILROOM_MIGRATE", "false");
            env.put("MAILROOM_TRANSPORT", "http");
            env.put("MAILROOM_HTTP_BASE_URL", provider.baseUrl());
            env.put("MAILROOM_HTTP_TOKEN", "tok_restart");
            env.put("MAILROOM_MAIL_FROM", "Shop <shop@example.com>");
            env.put("MAILROOM_WORKER_ID", "restart-d" + i);
            env.put("MAILROOM_LEASE", "10s");
            env.put("MAILROOM_POLL_INTERVAL", "200ms");
            env.put("MAILROOM_DISPATCHER_HOST", "127.0.0.1");
            env.put("MAILROOM_DISPATCHER_PORT", "0");
            dispatchers.add(DispatcherService.start(ServiceConfig.fromEnv(env), listener));
        }
    }

    @AfterEach
    void stop() throws IOException {
        dispatchers.forEach(DispatcherService::close);
        if (provider != null) {
            provider.close();
        }
        if (orders != null) {
            orders.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void dispatchersReconnectAfterTheServerRestartsAndNothingIsLostOrDoubled() throws Exception {
        OrderService service = new OrderService(DSL.using(orders, SQLDialect.POSTGRES));
        for (int i = 0; i < 30; i++) {
            service.placeOrder(order(i));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> count("SELECT count(*) FROM mailroom.outbox_message WHERE status = 'done'") == 30);
        for (int i = 30; i < 40; i++) {
            service.placeOrder(order(i)); // in flight when the server goes down
        }

        long down = System.nanoTime();
        postgres.close();
        log.info("PostgreSQL stopped in {} ms", (System.nanoTime() - down) / 1_000_000);
        await().atMost(Duration.ofSeconds(30)).until(() -> connectionErrors.get() > 0);
        int refused = 0;
        for (int i = 40; i < 42; i++) {
            try {
                service.placeOrder(order(i));
            } catch (RuntimeException e) {
                refused++; // not committed: the database is down
            }
        }
        assertThat(refused).as("no order can commit while the server is down").isEqualTo(2);

        long up = System.nanoTime();
        postgres = startPostgres();
        log.info("PostgreSQL down for {} ms, started again in {} ms", (System.nanoTime() - down) / 1_000_000,
                (System.nanoTime() - up) / 1_000_000);
        for (int i = 42; i < 72; i++) {
            placeRetrying(service, order(i));
        }

        DSLContext dsl = DSL.using(orders, SQLDialect.POSTGRES);
        int committed = count("SELECT count(*) FROM orders");
        assertThat(committed).isEqualTo(70);
        await().atMost(Duration.ofSeconds(90)).until(() ->
                count("SELECT count(*) FROM mailroom.outbox_message WHERE status = 'done'") == committed);
        log.info("All {} orders sent {} ms after the restart", committed, (System.nanoTime() - up) / 1_000_000);
        assertThat(dispatchers).allSatisfy(d -> {
            assertThat(d.readiness().get("database")).isEqualTo("UP");
            assertThat(d.dispatcher().isRunning()).isTrue();
        });
        assertThat(connectionErrors.get()).as("the dispatchers did see the database go").isPositive();

        // Exactly one effect per order at the provider, whatever was resent after the restart.
        Map<String, Long> effects = Records.provider(temp.resolve("provider.rec")).stream()
                .filter(Records.ProviderLine::isEffect)
                .collect(Collectors.groupingBy(Records.ProviderLine::key, Collectors.counting()));
        List<String> keys = dsl.fetch("SELECT 'email-order-' || id FROM orders").getValues(0, String.class);
        assertThat(effects.keySet()).containsExactlyInAnyOrderElementsOf(keys);
        assertThat(effects.values()).allSatisfy(n -> assertThat(n).isEqualTo(1L));
    }

    private static void placeRetrying(OrderService service, PlaceOrder order) {
        // Right after the restart the pool may still hand out a dead connection once.
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> service.placeOrder(order) != null);
    }

    private int count(String sql) {
        return DSL.using(orders, SQLDialect.POSTGRES).fetchSingle(sql).get(0, Integer.class);
    }

    private EmbeddedPostgres startPostgres() throws IOException {
        return EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).setPort(port).start();
    }

    private String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
    }

    private HikariDataSource pool() {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(jdbcUrl() + "&ApplicationName=restart-orders");
        c.setMaximumPoolSize(3);
        c.setConnectionTimeout(2_000);
        return new HikariDataSource(c);
    }

    private static PlaceOrder order(int i) {
        return new PlaceOrder("restart" + i + "@example.com", "Restart " + i, "EUR",
                List.of(new PlaceOrder.Line("SKU-1", "Mug", 1, new BigDecimal("9.50"))));
    }
}
