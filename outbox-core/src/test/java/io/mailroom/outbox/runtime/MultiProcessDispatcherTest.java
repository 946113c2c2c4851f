package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three dispatcher processes over 10,000 messages; one is killed with SIGKILL mid-run. Its claims
 * are rescued once their lease expires and finished by the others; nothing is lost, and the only
 * messages delivered twice are ones the killed process had delivered without recording.
 */
class MultiProcessDispatcherTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void killNineOfOneProcessLosesNothingAndDuplicatesOnlyItsUnrecordedWork() throws Exception {
        int n = 10_000;
        pg.dsl().execute("CREATE TABLE delivery_log (message_id bigint NOT NULL, claim_version bigint NOT NULL,"
                + " worker varchar NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())");
        Fixtures.enqueue(pg.dsl(), null, "p", n);

        Path logs = Files.createDirectories(Path.of("target", "multi-process"));
        List<Process> processes = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            // the victim sends slowly, so that it always holds claims when it is killed
            processes.add(start("proc-" + i, i == 1 ? 100 : 2, logs.resolve("proc-" + i + ".log").toFile()));
        }
        Process victim = processes.getFirst();
        try {
            await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(100))
                    .until(() -> deliveriesBy("proc-1") >= 100 && count("delivery_log") >= 2000 && runningOf("proc-1") > 0);
            victim.destroyForcibly(); // SIGKILL: no shutdown hook, no hand-back
            assertThat(victim.waitFor(10, TimeUnit.SECONDS)).isTrue();
            // a COMMIT the victim sent just before it died still completes on the server: count its
            // running claims only once its sessions are gone (once failed counting 8 for 4 rescued)
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> pg.dsl().fetchCount(
                    pg.dsl().selectFrom("pg_stat_activity").where("application_name = 'proc-1'")) == 0);
            int runningOfVictim = runningOf("proc-1");

            await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(250))
                    .until(() -> Fixtures.countByStatus(pg.dsl(), "done") == n);

            assertThat(Fixtures.countByStatus(pg.dsl(), "running")).isZero();
            assertThat(Fixtures.countByStatus(pg.dsl(), "pending")).isZero();
            assertThat(Fixtures.countByStatus(pg.dsl(), "failed")).isZero();

            // every message delivered; a second delivery only where the victim's was never recorded
            Map<Long, List<Record>> byMessage = new HashMap<>();
            for (Record r : pg.dsl().fetch("SELECT message_id, claim_version, worker FROM delivery_log ORDER BY at")) {
                byMessage.computeIfAbsent(r.get("message_id", Long.class), k -> new ArrayList<>()).add(r);
            }
            assertThat(byMessage).hasSize(n);
            int duplicated = 0;
            for (var entry : byMessage.entrySet()) {
                List<Record> ds = entry.getValue();
                if (ds.size() > 1) {
                    duplicated++;
                    for (Record earlier : ds.subList(0, ds.size() - 1)) {
                        assertThat(earlier.get("worker", String.class))
                                .as("message %s delivered again although its earlier delivery was recorded", entry.getKey())
                                .isEqualTo("proc-1");
                    }
                }
            }
            // the rescued ones were finished under a newer claim version: the dead claim was fenced out
            int rescued = pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_attempt").where("outcome = 'lease_expired'"));
            assertThat(rescued).isGreaterThan(0).isEqualTo(runningOfVictim);
            assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_attempt a")
                    .where("a.outcome = 'lease_expired' AND NOT EXISTS (SELECT 1 FROM outbox_attempt d"
                            + " WHERE d.message_id = a.message_id AND d.outcome = 'done' AND d.claim_version > a.claim_version)")))
                    .isZero();
            assertThat(duplicated).isLessThanOrEqualTo(rescued);
        } finally {
            for (Process p : processes) {
                p.destroy(); // SIGTERM: graceful stop
            }
            for (Process p : processes) {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }
    }

    private int runningOf(String worker) {
        return pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_message").where("status = 'running' AND claimed_by = ?", worker));
    }

    private Process start(String worker, long sendMillis, File log) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                DispatcherProcessMain.class.getName(), pg.database().jdbcUrlWithCredentials(), worker, "6",
                String.valueOf(sendMillis));
        pb.redirectErrorStream(true);
        pb.redirectOutput(log);
        return pb.start();
    }

    private int count(String table) {
        return pg.dsl().fetchCount(pg.dsl().selectFrom(table));
    }

    private int deliveriesBy(String worker) {
        return pg.dsl().fetchCount(pg.dsl().selectFrom("delivery_log").where("worker = ?", worker));
    }
}
