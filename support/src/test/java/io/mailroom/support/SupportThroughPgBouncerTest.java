package io.mailroom.support;

import io.mailroom.outbox.SessionSettings;
import io.mailroom.testing.PgBouncer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static io.mailroom.support.TestMail.Result.FAILED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The support service behind PgBouncer in transaction mode, with one server session behind the pooler
 * so that every client transaction lands on it: its actions make their timeouts per transaction and
 * leave nothing on the server session for the next client. Session mode, the default for a direct
 * connection, is shown leaking there, which is why the service passes the pooled mode on.
 */
class SupportThroughPgBouncerTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Actor ALICE = new Actor("alice", Role.SUPPORT);

    @BeforeEach
    void setUp() {
        TestMail.truncate(pg.dsl());
    }

    @Test
    void actionsInTransactionModeLeaveNoSettingOnTheServerSession() throws Exception {
        assertThat(retryThroughPooler(SessionSettings.TRANSACTION)).isEqualTo("0");
    }

    @Test
    void sessionModeWouldLeaveItsTimeoutForTheNextClient() throws Exception {
        assertThat(retryThroughPooler(SessionSettings.SESSION)).isNotEqualTo("0");
    }

    /** Retries a failed email through a pooler with one server session; the statement_timeout a later client then sees. */
    private String retryThroughPooler(SessionSettings settings) throws Exception {
        assumeThat(PgBouncer.binary()).as("pgbouncer is not installed (apt-get install pgbouncer): test skipped").isPresent();
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        URI uri = URI.create(pg.jdbcUrl().substring("jdbc:".length()));
        String user = String.valueOf(pg.dsl().fetchValue("SELECT current_user"));
        try (PgBouncer bouncer = PgBouncer.start(uri.getHost(), uri.getPort(), pg.database().name(), user, 1)) {
            PGSimpleDataSource pooled = new PGSimpleDataSource();
            pooled.setUrl(bouncer.jdbcUrl());
            SupportService service = new SupportService(pooled, TransportStatus.UNKNOWN, settings);

            assertThat(service.retry(ALICE, "email-order-102", "mailbox fixed")).isInstanceOf(ActionResult.Applied.class);
            assertThat(service.email("email-order-102").orElseThrow().status()).isEqualTo(EmailStatus.PENDING);

            try (Connection next = pooled.getConnection(); Statement st = next.createStatement();
                 ResultSet rs = st.executeQuery("SHOW statement_timeout")) {
                rs.next();
                return rs.getString(1);
            }
        }
    }
}
