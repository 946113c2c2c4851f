package io.mailroom.email.service;

import io.mailroom.outbox.maintenance.RollupConfig;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dispatcher's schedule of the stats rollup: it folds attempts into the charts' buckets by
 * itself, and forgets old buckets of every owner's rollup (delivery-events' bounces too).
 */
class RollupScheduleTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void theScheduleFoldsAttemptsAndForgetsEveryOwnersOldBuckets() {
        var dsl = pg.dsl();
        dsl.execute("""
                INSERT INTO outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id, message_created_at,
                                           status, max_attempts)
                VALUES ('k-1', 'email.welcome', 'user', '42', 1, now(), 'done', 10)""");
        dsl.execute("""
                INSERT INTO outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker, started_at, finished_at, outcome)
                VALUES ('k-1', 1, 1, 1, 'w', now() - interval '3 minutes', now() - interval '3 minutes', 'done')""");
        dsl.execute("""
                INSERT INTO delivery_event_rollup (resolution, bucket, topic, kind, bounce, events)
                VALUES ('minute', now() - interval '3 days', 'email.welcome', 'bounced', 'hard', 1),
                       ('hour', date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00'), 'email.welcome', 'bounced', 'hard', 1)""");

        try (RollupSchedule schedule = new RollupSchedule(pg.dataSource(), RollupConfig.defaults(), Duration.ofMillis(200))) {
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
                assertThat(dsl.fetchValue("SELECT sum(sent) FROM outbox_rollup WHERE resolution = 'hour' AND topic = 'email.welcome'"))
                        .hasToString("1");
                assertThat(dsl.fetchValue("SELECT count(*) FROM delivery_event_rollup")).hasToString("1");
            });
            assertThat(schedule.consecutiveFailures()).isZero();
        }
        assertThat(RollupSchedule.ownerSteps()).extracting(s -> s.table()).containsExactly("delivery_event_rollup");
    }
}
