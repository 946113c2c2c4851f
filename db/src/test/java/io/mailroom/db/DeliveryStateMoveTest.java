package io.mailroom.db;

import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.flywaydb.core.api.MigrationVersion;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * V16 moves each email's delivery state off {@code outbox_effect} into delivery-events' own
 * {@code delivery_state}: a database at V15.1 with states keeps every one of them, and the effect
 * loses the columns.
 */
class DeliveryStateMoveTest {

    @Test
    void statesOnTheEffectMoveToTheirOwnTable() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            Schema.flyway(db.dataSource(), MailroomSchema.DEFAULT).target(MigrationVersion.fromVersion("15.1")).load().migrate();
            var dsl = MailroomSchema.DEFAULT.dsl(db.dataSource());
            for (String key : new String[] {"bounced-1", "delivered-1", "unreported-1"}) {
                dsl.execute(MailroomSchema.DEFAULT.sql("""
                        INSERT INTO {schema}.outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                                           message_created_at, status, max_attempts)
                        VALUES (?, 'email.t', 'order', '1', 1, now(), 'done', 5)"""), key);
            }
            dsl.execute(MailroomSchema.DEFAULT.sql("""
                    UPDATE {schema}.outbox_effect SET delivery_state = 'bounced', delivery_detail = 'hard bounce: 550',
                           delivery_updated_at = timestamptz '2026-12-01T10:00:00Z' WHERE idempotency_key = 'bounced-1'"""));
            dsl.execute(MailroomSchema.DEFAULT.sql("""
                    UPDATE {schema}.outbox_effect SET delivery_state = 'delivered',
                           delivery_updated_at = timestamptz '2026-12-01T11:00:00Z' WHERE idempotency_key = 'delivered-1'"""));

            Schema.migrate(db.dataSource(), MailroomSchema.DEFAULT);

            assertThat(dsl.fetch(MailroomSchema.DEFAULT.sql(
                            "SELECT idempotency_key || ' ' || state || ' ' || coalesce(detail, '-') AS s FROM {schema}.delivery_state ORDER BY 1"))
                    .getValues("s", String.class))
                    .containsExactly("bounced-1 bounced hard bounce: 550", "delivered-1 delivered -");
            assertThat(dsl.fetchValues("SELECT column_name::text FROM information_schema.columns WHERE table_schema = 'mailroom'"
                    + " AND table_name = 'outbox_effect' AND column_name LIKE 'delivery%'")).isEmpty();
        }
    }
}
