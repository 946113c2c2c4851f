package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.testing.ChildJvm;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A message whose handler kills its process, every time, under a fixed worker id (a StatefulSet
 * pod, a systemd unit with a fixed MAILROOM_WORKER_ID): each restart counts the attempt its
 * predecessor died in, and the message ends failed after its attempt limit, with a history that
 * says why, instead of crashing the fleet forever.
 */
class PoisonMessageCrashTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String WORKER = "poison-worker";
    static final int MAX_ATTEMPTS = 3;

    @Test
    void aMessageThatKillsItsProcessEveryTimeEndsFailedAfterItsAttemptLimit() throws Exception {
        var msg = Fixtures.enqueueOne(pg.dsl(), java.time.Clock.systemUTC(),
                Fixtures.message("kills-its-process").withMaxAttempts(MAX_ATTEMPTS));
        Path dir = Files.createTempDirectory("poison");
        int lives = 0;
        ChildJvm last = null;
        try {
            while (!"failed".equals(Fixtures.status(pg.dsl(), msg.id())) && lives <= MAX_ATTEMPTS + 1) {
                lives++;
                ChildJvm child = ChildJvm.of("poison-" + lives, KillingDispatcher.class.getName())
                        .args(List.of(pg.database().jdbcUrlWithCredentials())).log(dir.resolve("child.log")).appendLog()
                        .start();
                last = child;
                // either it dies handling the message, or (its attempts used up) it fails the message and lives on
                await().atMost(Duration.ofSeconds(60)).until(() -> !child.isAlive()
                        || "failed".equals(Fixtures.status(pg.dsl(), msg.id())));
            }
        } finally {
            if (last != null) {
                last.kill9();
            }
        }

        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("failed");
        assertThat(lives).as("one process per attempt, and one more that counted the last").isEqualTo(MAX_ATTEMPTS + 1);
        var row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get("attempts", Integer.class)).isEqualTo(MAX_ATTEMPTS);
        assertThat(row.get("last_error", String.class)).isEqualTo("interrupted: the process holding the claim stopped "
                + MAX_ATTEMPTS + " times (worker " + WORKER + ", attempt 3 of 3)");
        assertThat(pg.dsl().select(OUTBOX_ATTEMPT.OUTCOME).from(OUTBOX_ATTEMPT).where(OUTBOX_ATTEMPT.MESSAGE_ID.eq(msg.id()))
                .orderBy(OUTBOX_ATTEMPT.ATTEMPT).fetch(OUTBOX_ATTEMPT.OUTCOME))
                .as("every attempt in the history says its process stopped; none 'released' as never handled")
                .containsExactly("interrupted", "interrupted", "interrupted");
        assertThat(pg.dsl().fetchValue("SELECT status FROM outbox_effect WHERE message_id = " + msg.id())).isEqualTo("failed");
    }

    /** A dispatcher whose handler halts its JVM, as an out-of-memory kill or a native crash would. */
    public static final class KillingDispatcher {
        public static void main(String[] args) {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(args[0]);
            DispatcherConfig config = DispatcherConfig.builder().workerId(WORKER).batchSize(1).concurrency(1)
                    .claimers(1).pollInterval(Duration.ofMillis(50)).listenForNotifications(false)
                    .backoff(new Backoff(Duration.ofMillis(10), Duration.ofMillis(10), 1.0, 0.0)).build();
            MessageHandler crash = (m, ctx) -> {
                System.out.println("HANDLING " + m.idempotencyKey() + " attempt " + m.attempt());
                System.out.flush();
                Runtime.getRuntime().halt(137);
                return Outcome.done();
            };
            new Dispatcher(ds, config, Map.of(Fixtures.TOPIC, crash)).start();
        }
    }
}
