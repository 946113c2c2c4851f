package io.mailroom.email.api;

import io.mailroom.db.MailroomSchema;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.PendingChange;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * sendAt at enqueue (Java and the SQL function alike: the bound refused naming sendAt, a time past
 * is now), and cancel / reschedule by key from Java and from SQL, giving the same answers.
 */
class SendLaterTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant NOW = Instant.parse("2030-03-01T08:00:00Z");
    private final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
    private final EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer(clock, false, MailroomSchema.DEFAULT), null,
            EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES, clock, EmailOutbox.DEFAULT_MAX_SEND_AHEAD);

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    private static OutgoingEmail.Builder reminder(String key) {
        return OutgoingEmail.template("cart_reminder").to("an@example.com", null).about("cart", "9").idempotencyKey(key)
                .data(Map.of("items", 2));
    }

    private Instant availableAt(String key) {
        return pg.dsl().fetchSingle(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key)).getAvailableAt();
    }

    private <T> T inTx(java.util.function.Function<DSLContext, T> work) {
        return pg.dsl().transactionResult(cfg -> work.apply(cfg.dsl()));
    }

    // ------------------------------------------------------------------------------------- Java

    @Test
    void anEmailScheduledAheadIsWrittenAvailableAtItsSendTime() {
        Instant at = NOW.plus(Duration.ofDays(1));
        inTx(tx -> outbox.enqueue(tx, reminder("later-1").sendAt(at).build()));
        assertThat(availableAt("later-1")).isEqualTo(at);
    }

    @Test
    void exactlyTheBoundAheadIsAcceptedAndASecondMoreIsRefusedNamingSendAtAndTheBound() {
        inTx(tx -> outbox.enqueue(tx, reminder("edge").sendAt(NOW.plus(Duration.ofDays(30))).build()));
        assertThat(availableAt("edge")).isEqualTo(NOW.plus(Duration.ofDays(30)));
        Instant tooFar = NOW.plus(Duration.ofDays(30)).plusSeconds(1);
        assertThatThrownBy(() -> inTx(tx -> outbox.enqueue(tx, reminder("too-far").sendAt(tooFar).build())))
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> {
                    assertThat(e.field()).isEqualTo("sendAt");
                    assertThat(e.getMessage()).isEqualTo("sendAt must be at most 30 days ahead, got 2030-03-31T08:00:01Z");
                });
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("too-far"))).isZero();
    }

    @Test
    void theBoundIsASettingOfEmailOutbox() {
        EmailOutbox hourAhead = new EmailOutbox(new OutboxEnqueuer(clock, false), null, EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES,
                clock, Duration.ofHours(1));
        assertThat(hourAhead.maxSendAhead()).isEqualTo(Duration.ofHours(1));
        assertThatThrownBy(() -> hourAhead.message(reminder("k").sendAt(NOW.plus(Duration.ofMinutes(61))).build()))
                .isInstanceOf(InvalidEmailException.class).hasMessageStartingWith("sendAt must be at most 1 hour ahead");
        assertThatThrownBy(() -> new EmailOutbox(new OutboxEnqueuer(), null, 4096, clock, Duration.ofSeconds(5)))
                .hasMessageContaining("maxSendAhead");
    }

    @Test
    void aSendTimeInThePastMeansNow() {
        inTx(tx -> outbox.enqueue(tx, reminder("past").sendAt(NOW.minus(Duration.ofDays(3))).build()));
        inTx(tx -> outbox.enqueue(tx, reminder("exactly-now").sendAt(NOW).build()));
        assertThat(availableAt("past")).isEqualTo(NOW);
        assertThat(availableAt("exactly-now")).isEqualTo(NOW);
        // and the message is the one an email without a time gives
        assertThat(outbox.message(reminder("past").sendAt(NOW.minusSeconds(1)).build()))
                .isEqualTo(outbox.message(reminder("past").build()));
    }

    @Test
    void cancelAndRescheduleThroughEmailOutbox() {
        inTx(tx -> outbox.enqueue(tx, reminder("r1").sendAt(NOW.plus(Duration.ofHours(2))).build()));
        Instant tomorrow = NOW.plus(Duration.ofDays(1));
        PendingChange moved = inTx(tx -> outbox.reschedule(tx, "r1", tomorrow));
        assertThat(moved.outcome()).isEqualTo(PendingChange.Outcome.RESCHEDULED);
        assertThat(availableAt("r1")).isEqualTo(tomorrow);
        assertThatThrownBy(() -> inTx(tx -> outbox.reschedule(tx, "r1", NOW.plus(Duration.ofDays(31)))))
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> assertThat(e.field()).isEqualTo("sendAt"));
        assertThat(inTx(tx -> outbox.reschedule(tx, "r1", NOW.minusSeconds(30))).sendAt()).as("past is now").isEqualTo(NOW);
        assertThat(inTx(tx -> outbox.cancel(tx, "r1")).outcome()).isEqualTo(PendingChange.Outcome.CANCELLED);
        assertThat(inTx(tx -> outbox.cancel(tx, "r1")).answer()).isEqualTo("too_late:cancelled");
        assertThat(inTx(tx -> outbox.cancel(tx, "r2")).outcome()).isEqualTo(PendingChange.Outcome.NOT_FOUND);
    }

    // -------------------------------------------------------------------------------------- SQL

    private static final String CALL = "SELECT enqueue_email(template => 'cart_reminder', to_address => 'an@example.com',"
            + " idempotency_key => ?, about_type => 'cart', about_id => '9', send_at => ?)";

    @Test
    void theSqlFunctionSchedulesWithTheSameBoundAndPastMeansNow() throws Exception {
        try (Connection c = pg.newConnection()) {
            c.setAutoCommit(false);
            Instant dbNow = dbNow(c);
            call(c, "sql-later", dbNow.plus(Duration.ofDays(2)));
            call(c, "sql-past", dbNow.minus(Duration.ofDays(2)));
            call(c, "sql-none", null);
            c.commit();
            assertThat(availableAt("sql-later")).isEqualTo(dbNow.plus(Duration.ofDays(2)));
            assertThat(availableAt("sql-past")).isEqualTo(dbNow);
            assertThat(availableAt("sql-none")).isEqualTo(dbNow);

            Instant tooFar = Instant.parse("2099-01-02T03:04:05.120Z");
            assertThatThrownBy(() -> call(c, "sql-too-far", tooFar)).isInstanceOfSatisfying(PSQLException.class, e -> {
                assertThat(e.getSQLState()).isEqualTo("22023");
                assertThat(e.getServerErrorMessage().getColumn()).isEqualTo("sendAt");
                // the words of the Java API's refusal of the same time
                assertThat(e.getServerErrorMessage().getMessage())
                        .isEqualTo("sendAt must be at most 30 days ahead, got " + tooFar);
            });
            c.rollback();
        }
    }

    @Test
    void theOldCallFormsStillWork() throws Exception {
        try (Connection c = pg.newConnection(); Statement st = c.createStatement()) {
            // positional, all thirteen of V15's arguments
            st.executeQuery("SELECT enqueue_email('cart_reminder', 'an@example.com', 'old-13', 'cart', '9', '{}'::json, NULL,"
                    + " 'en', NULL, NULL, NULL, NULL, NULL)").close();
            // positional, the five required ones
            st.executeQuery("SELECT enqueue_email('cart_reminder', 'an@example.com', 'old-5', 'cart', '9')").close();
            // named, without send_at
            st.executeQuery("SELECT enqueue_email(template => 'cart_reminder', to_address => 'an@example.com',"
                    + " idempotency_key => 'old-named', about_type => 'cart', about_id => '9', locale => 'vi')").close();
        }
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.AVAILABLE_AT.eq(OUTBOX_MESSAGE.CREATED_AT))).isEqualTo(3);
    }

    @Test
    void cancelAndRescheduleFromSqlAnswerAsJavaDoes() throws Exception {
        try (Connection c = pg.newConnection()) {
            c.setAutoCommit(true);
            Instant dbNow = dbNow(c);
            call(c, "s1", dbNow.plus(Duration.ofHours(1)));
            call(c, "s2", dbNow.plus(Duration.ofHours(1)));
            call(c, "s3", null);
            Instant later = dbNow.plus(Duration.ofDays(3));
            assertThat(reschedule(c, "s1", later)).isEqualTo("rescheduled");
            assertThat(availableAt("s1")).isEqualTo(later);
            assertThat(cancel(c, "s2")).isEqualTo("cancelled");
            assertThat(pg.dsl().fetchSingle(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("s2")).getStatus()).isEqualTo("cancelled");
            assertThat(cancel(c, "s2")).isEqualTo(inTx(tx -> outbox.cancel(tx, "s2")).answer()).isEqualTo("too_late:cancelled");
            assertThat(cancel(c, "nobody")).isEqualTo("not_found");
            assertThat(reschedule(c, "nobody", later)).isEqualTo("not_found");

            // claimed by a dispatcher, then sent: the states a too-late answer names
            pg.dsl().execute("UPDATE outbox_message SET status = 'running', claimed_by = 'w1', claimed_at = now(),"
                    + " lease_until = now() + interval '1 minute' WHERE idempotency_key = 's3'");
            assertThat(cancel(c, "s3")).isEqualTo(inTx(tx -> outbox.cancel(tx, "s3")).answer()).isEqualTo("too_late:sending");
            assertThat(reschedule(c, "s3", later)).isEqualTo("too_late:sending");
            pg.dsl().execute("UPDATE outbox_message SET status = 'done', lease_until = NULL, finished_at = now()"
                    + " WHERE idempotency_key = 's3'");
            assertThat(cancel(c, "s3")).isEqualTo(inTx(tx -> outbox.cancel(tx, "s3")).answer()).isEqualTo("too_late:sent");

            // past is now; beyond the bound and a missing time are refused naming sendAt
            assertThat(reschedule(c, "s1", Instant.parse("2001-01-01T00:00:00Z"))).isEqualTo("rescheduled");
            assertThat(availableAt("s1")).isBetween(dbNow, Instant.now().plusSeconds(5));
            for (Instant bad : new Instant[]{dbNow.plus(Duration.ofDays(31)), null}) {
                assertThatThrownBy(() -> reschedule(c, "s1", bad)).isInstanceOfSatisfying(PSQLException.class, e -> {
                    assertThat(e.getSQLState()).isEqualTo("22023");
                    assertThat(e.getServerErrorMessage().getColumn()).isEqualTo("sendAt");
                });
            }
            assertThatThrownBy(() -> cancel(c, " ")).isInstanceOfSatisfying(PSQLException.class,
                    e -> assertThat(e.getServerErrorMessage().getColumn()).isEqualTo("idempotencyKey"));
        }
    }

    /**
     * Real threads: a dispatcher claims while another session calls cancel_email on the same emails.
     * Each email has one winner: sent (and the answer too_late) or cancelled (and never handled).
     */
    @Test
    void cancelEmailRacingWithAClaimHasOneWinnerPerEmail() throws Exception {
        int n = 200;
        OutboxEnqueuer enqueuer = new OutboxEnqueuer(null, false);
        EmailOutbox atDbTime = new EmailOutbox(enqueuer);
        pg.dsl().transaction(cfg -> {
            for (int i = 1; i <= n; i++) {
                atDbTime.enqueue(cfg.dsl(), reminder("race-" + i).build());
            }
        });
        java.util.Set<String> handled = java.util.concurrent.ConcurrentHashMap.newKeySet();
        var config = io.mailroom.outbox.runtime.DispatcherConfig.builder().workerId("racer").batchSize(5)
                .listenForNotifications(false).build();
        var dispatcher = new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config, Map.of("email.cart_reminder",
                (m, ctx) -> {
                    handled.add(m.idempotencyKey());
                    return io.mailroom.outbox.runtime.Outcome.done();
                }));
        Map<String, String> answers = new java.util.concurrent.ConcurrentHashMap<>();
        var start = new java.util.concurrent.CountDownLatch(1);
        var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            var claimer = pool.submit(() -> {
                start.await();
                while (dispatcher.runOnce() > 0 || answers.size() < n) {
                    Thread.onSpinWait();
                }
                return null;
            });
            Connection session = pg.newConnection(); // opened before the start, so both begin at once
            session.setAutoCommit(true);
            var canceller = pool.submit(() -> {
                try (Connection c = session) {
                    start.await();
                    for (int i = n; i >= 1; i--) {
                        answers.put("race-" + i, cancel(c, "race-" + i));
                    }
                }
                return null;
            });
            start.countDown();
            canceller.get(60, java.util.concurrent.TimeUnit.SECONDS);
            claimer.get(60, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        int cancelled = 0;
        for (int i = 1; i <= n; i++) {
            String key = "race-" + i;
            String status = pg.dsl().fetchSingle(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key)).getStatus();
            if (answers.get(key).equals("cancelled")) {
                cancelled++;
                assertThat(handled).as("cancelled %s was handled", key).doesNotContain(key);
                assertThat(status).isEqualTo("cancelled");
            } else {
                assertThat(answers.get(key)).isIn("too_late:sending", "too_late:sent");
                assertThat(handled).as("%s too late to cancel but never handled", key).contains(key);
                assertThat(status).isEqualTo("done");
            }
        }
        assertThat(cancelled + handled.size()).isEqualTo(n);
        assertThat(cancelled).isPositive();
        assertThat(handled).isNotEmpty();
    }

    private static Instant dbNow(Connection c) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT now()")) {
            rs.next();
            return rs.getObject(1, java.time.OffsetDateTime.class).toInstant();
        }
    }

    private static void call(Connection c, String key, Instant sendAt) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(CALL)) {
            ps.setString(1, key);
            ps.setObject(2, sendAt == null ? null : sendAt.atOffset(ZoneOffset.UTC), java.sql.Types.TIMESTAMP_WITH_TIMEZONE);
            ps.executeQuery().close();
        }
    }

    private static String cancel(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT cancel_email(?)")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static String reschedule(Connection c, String key, Instant at) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT reschedule_email(?, ?)")) {
            ps.setString(1, key);
            ps.setObject(2, at == null ? null : at.atOffset(ZoneOffset.UTC), java.sql.Types.TIMESTAMP_WITH_TIMEZONE);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

}
