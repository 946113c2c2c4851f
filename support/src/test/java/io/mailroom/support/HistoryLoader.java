package io.mailroom.support;

import org.jooq.DSLContext;

/**
 * Bulk-loads support history the way months of traffic leave it: three emails per order
 * (confirmation, shipping notice, a resend), each with its attempt and idempotency record, most
 * sent and one in fifty failed, spread over the past; the hot queue rows are gone (retention).
 */
final class HistoryLoader {

    private HistoryLoader() {
    }

    /** Loads {@code effects} rows (orders 1 .. effects/3) and analyzes the tables. */
    static void load(DSLContext dsl, int effects) {
        dsl.execute("""
                INSERT INTO outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id, message_created_at,
                                           status, attempts, max_attempts, last_error, created_at, updated_at, finished_at, resend_of)
                SELECT CASE g % 3 WHEN 0 THEN 'email-order-' || (g / 3 + 1)
                                  WHEN 1 THEN 'email-order-' || (g / 3 + 1) || '-shipped'
                                  ELSE 'email-order-' || (g / 3 + 1) || '-resend-1' END,
                       CASE g % 3 WHEN 1 THEN 'email.order_shipped' ELSE 'email.order_confirmation' END,
                       'order', (g / 3 + 1)::text, g, t, CASE WHEN g % 50 = 7 THEN 'failed' ELSE 'done' END, 1, 10,
                       CASE WHEN g % 50 = 7 THEN '550 5.1.1 mailbox unavailable' END, t, t + interval '2 seconds',
                       t + interval '2 seconds', CASE g % 3 WHEN 2 THEN 'email-order-' || (g / 3 + 1) END
                FROM (SELECT g, now() - interval '400 days' + g * interval '30 seconds' AS t
                      FROM generate_series(0, {0} - 1) g) s
                """, effects);
        dsl.execute("""
                INSERT INTO outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker, started_at, finished_at,
                                            outcome, error, detail)
                SELECT idempotency_key, message_id, 1, 1, 'bench-worker', created_at, finished_at,
                       CASE status WHEN 'done' THEN 'done' ELSE 'failed' END, last_error,
                       jsonb_build_object('transport', 'http', 'status', CASE status WHEN 'done' THEN 202 ELSE 422 END,
                                          'providerMessageId', 'prov-' || message_id)
                FROM outbox_effect
                """);
        dsl.execute("""
                INSERT INTO idempotency_record (effect_key, fingerprint, state, reservations, reserved_by, first_reserved_at,
                                                reserved_at, completed_at, result_ref, last_error, descriptor, updated_at)
                SELECT idempotency_key, repeat('a', 64), CASE status WHEN 'done' THEN 'succeeded' ELSE 'failed' END, 1,
                       'bench-worker', created_at, created_at, finished_at,
                       CASE status WHEN 'done' THEN 'prov-' || message_id END, last_error,
                       jsonb_build_object('recipient', 'customer' || aggregate_id || '@example.com', 'subject', 'Your order'),
                       finished_at
                FROM outbox_effect
                """);
        dsl.execute("ANALYZE outbox_effect, outbox_attempt, idempotency_record, audit_log, outbox_message");
    }
}
