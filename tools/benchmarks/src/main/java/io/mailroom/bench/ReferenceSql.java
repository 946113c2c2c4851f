package io.mailroom.bench;

import java.util.List;
import java.util.Locale;

/**
 * The statements the {@link io.mailroom.outbox.runtime.Dispatcher} runtime sends to claim and complete
 * messages, written out as the plain JDBC reference runs them. They are the texts jOOQ renders for
 * {@code ClaimStore.claim}, {@code CompletionStore.finish}, {@code HistoryStore.updateEffects} and {@code insertAttempts}
 * (default settings: database time, ordering keys honoured), bind for bind, so that the reference
 * measures the database's limit for exactly the runtime's SQL.
 *
 * <p>The census run of scenario 1 captures what the runtime really sent and compares it with these
 * texts ({@link #sameAs}); a difference is reported next to the ratio instead of being hidden, and
 * means this file needs the new texts.
 */
final class ReferenceSql {

    /**
     * The claim for a batch size ({@link #claim}: {@code %d} is the limit, written into the text as
     * the runtime writes it, like the statuses). Binds: 1 topic (a claim of one topic, as the runtime
     * writes it: V28's index by topic), 2 worker, 3 incarnation, 4 lease seconds (double).
     */
    static final String CLAIM = """
            with "picked"("id", "created_at") as (select "c"."id", "c"."created_at" from "mailroom"."outbox_message" as "c" \
            where ("c"."status" = 'pending' and "c"."available_at" <= now() and "c"."topic" = ? \
            and ("c"."ordering_key" is null or not exists (select 1 as "one" from "mailroom"."outbox_message" as "earlier" \
            where ("earlier"."ordering_key" = "c"."ordering_key" and "earlier"."id" < "c"."id" \
            and "earlier"."status" in ('pending', 'running'))))) order by "c"."available_at", "c"."id" \
            fetch next %d rows only for no key update skip locked) update "mailroom"."outbox_message" set "status" = 'running', \
            "claimed_by" = ?, "claimed_incarnation" = ?, "claimed_at" = now(), "claim_version" = ("mailroom"."outbox_message"."claim_version" + 1), \
            "attempts" = ("mailroom"."outbox_message"."attempts" + 1), \
            "lease_until" = now() + make_interval(secs => cast(? as double precision)), "waiting_for" = null, "updated_at" = now() \
            from "picked" where ("mailroom"."outbox_message"."id" = "picked"."id" \
            and "mailroom"."outbox_message"."created_at" = "picked"."created_at") returning "mailroom"."outbox_message"."id", \
            "mailroom"."outbox_message"."created_at", "mailroom"."outbox_message"."topic", "mailroom"."outbox_message"."aggregate_type", \
            "mailroom"."outbox_message"."aggregate_id", "mailroom"."outbox_message"."idempotency_key", "mailroom"."outbox_message"."ordering_key", \
            "mailroom"."outbox_message"."payload", "mailroom"."outbox_message"."attempts", "mailroom"."outbox_message"."max_attempts", \
            "mailroom"."outbox_message"."claim_version", "mailroom"."outbox_message"."claimed_at", "mailroom"."outbox_message"."lease_until", \
            "mailroom"."outbox_message"."available_at\"""";

    /**
     * The claim from a claimer's low-water mark (issue 28): {@link #CLAIM} with the row comparison
     * that starts its index scan at the mark. Binds: 1 mark's available_at, 2 mark's id, then as
     * {@link #CLAIM}. The reference runs only the claim from the head (nothing it does needs a
     * mark); the census checks that the runtime's claims from a mark are this text.
     */
    static final String CLAIM_FROM_MARK = CLAIM.replace("\"c\".\"available_at\" <= now() and ",
            "\"c\".\"available_at\" <= now() and (\"c\".\"available_at\", \"c\".\"id\") >= (cast(? as timestamp with time zone), ?) and ");

    /**
     * Run in the claim's transaction before the claim, as {@code ClaimStore.ORDERED_PICK}: the pick is
     * planned as an ordered scan of the claim index, never a sort of every pending row.
     */
    static final String ORDERED_PICK = "SET LOCAL enable_sort = off";

    /** Binds: ids bigint[], created_at (ISO text)[], claim versions bigint[], kinds, errors, delays ms bigint[], what a release waits for. */
    static final String FINISH = """
            UPDATE mailroom.outbox_message AS m SET \
            status = CASE WHEN v.kind = 'release' THEN 'pending' WHEN v.kind <> 'retry' THEN v.kind \
            WHEN m.attempts >= m.max_attempts THEN 'failed' ELSE 'pending' END, \
            available_at = CASE WHEN v.kind IN ('retry', 'release') THEN now() + make_interval(secs => v.delay_ms / 1000.0) \
            ELSE m.available_at END, \
            attempts = CASE WHEN v.kind = 'release' THEN greatest(m.attempts - 1, 0) ELSE m.attempts END, \
            lease_until = NULL, last_error = CASE WHEN v.kind = 'done' THEN m.last_error ELSE v.error END, \
            waiting_for = CASE WHEN v.kind = 'release' THEN v.waiting_for END, \
            finished_at = CASE WHEN v.kind = 'release' THEN NULL WHEN v.kind = 'retry' AND m.attempts < m.max_attempts \
            THEN NULL ELSE now() END, updated_at = now() \
            FROM unnest(?::bigint[], ?::varchar[]::timestamptz[], ?::bigint[], ?::varchar[], ?::varchar[], ?::bigint[], ?::varchar[]) \
            AS v(id, created_at, claim_version, kind, error, delay_ms, waiting_for) \
            WHERE m.id = v.id AND m.created_at = v.created_at AND m.claim_version = v.claim_version \
            AND m.lease_until IS NOT NULL \
            RETURNING m.id, m.created_at, m.idempotency_key, m.status, m.attempts, m.max_attempts, \
            m.claim_version, m.claimed_by, m.claimed_at, m.last_error""";

    /** Binds: keys, message ids bigint[], statuses, attempts int[], errors. */
    static final String EFFECTS = """
            UPDATE mailroom.outbox_effect AS e SET status = v.status, attempts = v.attempts, last_error = v.error, \
            updated_at = now(), finished_at = CASE WHEN v.status IN ('done', 'failed', 'review', 'cancelled') \
            THEN now() END FROM unnest(?::varchar[], ?::bigint[], ?::varchar[], ?::int[], ?::varchar[]) \
            AS v(idempotency_key, message_id, status, attempts, error) \
            WHERE e.idempotency_key = v.idempotency_key AND e.message_id = v.message_id""";

    /** Binds: keys, message ids, attempt numbers, claim versions, workers, started, finished, outcomes, errors, details. */
    static final String ATTEMPTS = """
            INSERT INTO mailroom.outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker, started_at, \
            finished_at, outcome, error, detail) SELECT * FROM unnest(?::varchar[], ?::bigint[], ?::int[], \
            ?::bigint[], ?::varchar[], ?::varchar[]::timestamptz[], ?::varchar[]::timestamptz[], ?::varchar[], \
            ?::varchar[], ?::varchar[]::jsonb[])""";

    static final List<String> ALL = List.of(ORDERED_PICK, CLAIM, CLAIM_FROM_MARK, FINISH, EFFECTS, ATTEMPTS);

    private ReferenceSql() {
    }

    /** The claim with {@code batch} as its limit. */
    static String claim(int batch) {
        return CLAIM.formatted(batch);
    }

    /** Layout and case ignored, and the claim's limit (which the runtime sizes to its free slots). */
    static String normalize(String sql) {
        return sql.replaceAll("\\s+", " ").trim().toLowerCase(Locale.ROOT)
                .replaceAll("fetch next (\\d+|%d) rows only", "fetch next n rows only");
    }

    /** Whether {@code captured} (a statement the runtime executed) is one of the reference's texts. */
    static boolean sameAs(String reference, String captured) {
        return normalize(reference).equals(normalize(captured));
    }

    /** The kind of a captured runtime statement by what it does, or null if it is not a queue statement. */
    static String kindOf(String sql) {
        String s = normalize(sql);
        if (s.equals(normalize(ORDERED_PICK))) {
            return "ordered_pick";
        }
        if (s.contains("for no key update skip locked") && s.contains("\"picked\"") && !s.contains("lease_until\" <")) {
            return s.contains("(\"c\".\"available_at\", \"c\".\"id\") >=") ? "claim_from_mark" : "claim";
        }
        if (s.startsWith("update mailroom.outbox_message as m set status = case")) {
            return "finish";
        }
        if (s.startsWith("update mailroom.outbox_effect")) {
            return "effects";
        }
        if (s.startsWith("insert into mailroom.outbox_attempt")) {
            return "attempts";
        }
        return null;
    }

    static String of(String kind) {
        return switch (kind) {
            case "ordered_pick" -> ORDERED_PICK;
            case "claim" -> CLAIM;
            case "claim_from_mark" -> CLAIM_FROM_MARK;
            case "finish" -> FINISH;
            case "effects" -> EFFECTS;
            case "attempts" -> ATTEMPTS;
            default -> throw new IllegalArgumentException(kind);
        };
    }
}
