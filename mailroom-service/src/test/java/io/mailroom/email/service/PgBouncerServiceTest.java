package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.testing.PgBouncer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The dispatcher service behind PgBouncer in transaction mode ({@code MAILROOM_DB_POOLER=pgbouncer}):
 * the settings that only make sense there are checked, and a service started through a pgbouncer
 * process of its own (migrations and LISTEN over direct URLs) sends each email once.
 */
class PgBouncerServiceTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    @Test
    void poolerSettingsAreValidatedNamingTheVariable() {
        Map<String, String> env = ServiceEnv.smtp("jdbc:postgresql://127.0.0.1:6432/mailroom", 2525);
        env.put("MAILROOM_DB_POOLER", "pgpool");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_DB_POOLER");
        env.put("MAILROOM_DB_POOLER", "pgbouncer");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_MIGRATE_DB_URL"); // Flyway cannot migrate through it
        env.put("MAILROOM_MIGRATE", "false");
        env.put("MAILROOM_DB_SESSION_SETTINGS", "session");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_DB_SESSION_SETTINGS");
        env.put("MAILROOM_DB_SESSION_SETTINGS", "sometimes");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_DB_SESSION_SETTINGS");
        env.remove("MAILROOM_DB_SESSION_SETTINGS");
        env.put("MAILROOM_LISTEN_DB_URL", "postgres://direct");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_LISTEN_DB_URL");
        env.put("MAILROOM_LISTEN_DB_URL", "jdbc:postgresql://127.0.0.1:5432/mailroom?password=direct-s3cret");
        ServiceConfig config = ServiceConfig.fromEnv(env);
        assertThat(config.db().pooled()).isTrue();
        assertThat(config.dispatcher().sessionSettings()).isEqualTo(SessionSettings.TRANSACTION);
        assertThat(config.toString()).contains("pooler=pgbouncer").doesNotContain("direct-s3cret");
        env.put("MAILROOM_DB_SESSION_SETTINGS", "server");
        assertThat(ServiceConfig.fromEnv(env).dispatcher().sessionSettings()).isEqualTo(SessionSettings.SERVER);
        // and directly, nothing changes
        Map<String, String> direct = ServiceEnv.smtp("jdbc:postgresql://127.0.0.1:5432/mailroom", 2525);
        assertThat(ServiceConfig.fromEnv(direct).db()).isEqualTo(DbTopology.DIRECT);
    }

    @Test
    void serviceThroughPgBouncerSendsEveryEmailOnce() throws Exception {
        assumeThat(PgBouncer.binary()).as("pgbouncer is not installed (apt-get install pgbouncer): test skipped").isPresent();
        URI uri = URI.create(pg.jdbcUrl().substring("jdbc:".length()));
        String user = String.valueOf(pg.dsl().fetchValue("SELECT current_user"));
        try (PgBouncer bouncer = PgBouncer.start(uri.getHost(), uri.getPort(), pg.database().name(), user, 8)) {
            Map<String, String> env = ServiceEnv.smtp(bouncer.jdbcUrlDefaults(), greenMail.getSmtp().getPort());
            env.put("MAILROOM_TRANSPORT", "smtp");
            env.put("MAILROOM_DB_POOLER", "pgbouncer");
            env.put("MAILROOM_MIGRATE", "true");
            env.put("MAILROOM_MIGRATE_DB_URL", pg.database().jdbcUrlWithCredentials());
            env.put("MAILROOM_LISTEN_DB_URL", pg.database().jdbcUrlWithCredentials());
            env.put("MAILROOM_POLL_INTERVAL", "5s"); // a prompt send below comes from LISTEN, not from a poll
            int n = 40;
            try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
                // the LISTEN session is the only one of this service straight on the server
                await().atMost(Duration.ofSeconds(20)).until(() -> ((Number) pg.dsl().fetchValue(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                                + " AND application_name LIKE 'mailroom-dispatcher-%' AND query ILIKE 'LISTEN%'")).intValue() == 1);
                for (int i = 1; i <= n; i++) {
                    int order = i;
                    pg.dsl().transaction(cfg -> new OutboxEnqueuer().enqueue(cfg.dsl(), NewMessage.of(ServiceEnv.TOPIC,
                            "order", Integer.toString(order), "email-order-" + order, ServiceEnv.receipt(order, "c" + order + "@example.com", "C"))));
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> ((Number) pg.dsl().fetchValue(
                        "SELECT count(*) FROM outbox_message WHERE status = 'done'")).intValue() == n);
            }
            assertThat(greenMail.getReceivedMessages()).hasSize(n);
            assertThat(Arrays.stream(greenMail.getReceivedMessages()).map(m -> {
                try {
                    return m.getAllRecipients()[0].toString();
                } catch (jakarta.mail.MessagingException e) {
                    throw new IllegalStateException(e);
                }
            }).distinct().count()).isEqualTo(n);
        }
    }
}
