package io.mailroom.outbox.runtime;

import io.mailroom.db.MailroomSchema;
import org.jooq.DSLContext;
import org.jooq.Record;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.OUTBOX_DISPATCHER;

/**
 * The table of running dispatchers ({@code outbox_dispatcher}): each one says at start and at
 * every heartbeat who it is (worker id, process incarnation, host, version) and which topics it
 * serves, and removes itself when it stops gracefully. A row is live while its {@code expires_at}
 * is ahead, three heartbeat intervals of its own dispatcher. From it, {@link #unservedTopics}
 * finds the emails waiting on a topic no live dispatcher serves, which would otherwise wait
 * forever without a word. Each row also carries the claims its dispatcher held and the details its
 * embedding process reported at the last beat; {@code io.mailroom.outbox.admin.Dispatchers} reads them.
 */
public final class DispatcherRegistry {

    /** A row lives this many of its dispatcher's heartbeat intervals without a new beat. */
    static final int LIVE_FOR_BEATS = 3;
    /** Rows of dispatchers that stopped without saying so are removed after this long. */
    static final Duration FORGET_AFTER = Duration.ofDays(1);
    /** How long an email must have been due before its topic counts as unserved (dispatchers starting, registering). */
    public static final Duration DEFAULT_UNSERVED_AFTER = Duration.ofMinutes(1);
    /** How many of the oldest due emails are looked at: the unserved ones are the oldest, they never leave. */
    public static final int DEFAULT_SCAN_LIMIT = 10_000;

    static final String UNSERVED = """
            WITH served AS (
              SELECT DISTINCT unnest(topics) AS topic FROM {schema}.outbox_dispatcher WHERE expires_at > now()
            ), oldest AS (
              SELECT topic FROM {schema}.outbox_message
              WHERE status = 'pending' AND available_at <= now() - make_interval(secs => ?::double precision)
              ORDER BY available_at, id
              LIMIT ?
            )
            SELECT topic, count(*) AS waiting FROM oldest
            WHERE topic NOT IN (SELECT topic FROM served)
            GROUP BY topic ORDER BY topic""";

    private DispatcherRegistry() {
    }

    /** This dispatcher is alive: its row, replacing a predecessor's of the same worker id (no claims, no details). */
    static void beat(DSLContext tx, String workerId, String incarnation, String host, String version,
                     Set<String> topics, Duration heartbeatInterval) {
        beat(tx, workerId, incarnation, host, version, topics, heartbeatInterval, 0, null);
    }

    /**
     * This dispatcher is alive: its row, replacing a predecessor's of the same worker id, with the
     * claims it holds now and the embedding process's details (a JSON object's text, or null).
     */
    static void beat(DSLContext tx, String workerId, String incarnation, String host, String version,
                     Set<String> topics, Duration heartbeatInterval, int claimsInFlight, String details) {
        double liveSeconds = heartbeatInterval.toMillis() * LIVE_FOR_BEATS / 1000.0;
        String[] served = topics.stream().sorted().toArray(String[]::new);
        MailroomSchema schema = MailroomSchema.of(tx);
        tx.execute(schema.sql("""
                INSERT INTO {schema}.outbox_dispatcher AS d (worker_id, incarnation, host, version, topics, started_at,
                                                    heartbeat_at, expires_at, claims_in_flight, details)
                VALUES (?, ?, ?, ?, ?::varchar[], now(), now(), now() + make_interval(secs => ?::double precision), ?, ?::jsonb)
                ON CONFLICT (worker_id) DO UPDATE SET
                  incarnation = excluded.incarnation, host = excluded.host, version = excluded.version,
                  topics = excluded.topics, heartbeat_at = now(), expires_at = excluded.expires_at,
                  claims_in_flight = excluded.claims_in_flight, details = excluded.details,
                  started_at = CASE WHEN d.incarnation = excluded.incarnation THEN d.started_at ELSE now() END"""),
                workerId, incarnation, host, version, served, liveSeconds, Math.max(0, claimsInFlight), details);
        tx.execute(schema.sql("DELETE FROM {schema}.outbox_dispatcher WHERE expires_at < now() - make_interval(secs => ?::double precision)"),
                (double) FORGET_AFTER.toSeconds());
    }

    /** This dispatcher stopped: its row goes (only its own incarnation's: a successor may have replaced it). */
    static void remove(DSLContext tx, String workerId, String incarnation) {
        var d = OUTBOX_DISPATCHER;
        tx.deleteFrom(d).where(d.WORKER_ID.eq(workerId), d.INCARNATION.eq(incarnation)).execute();
    }

    /**
     * Topics with emails due for longer than {@code after} that no live dispatcher serves, with how
     * many of them are among the {@code scanLimit} oldest due emails (a lower bound when the queue is
     * longer). Paused topics are served (a dispatcher names them): they are not counted here.
     */
    public static Map<String, Long> unservedTopics(DSLContext dsl, Duration after, int scanLimit) {
        Map<String, Long> unserved = new LinkedHashMap<>();
        for (Record r : dsl.fetch(MailroomSchema.of(dsl).sql(UNSERVED), after.toMillis() / 1000.0, scanLimit)) {
            unserved.put(r.get("topic", String.class), r.get("waiting", Long.class));
        }
        return unserved;
    }

    /** {@link #unservedTopics(DSLContext, Duration, int)} with the defaults. */
    public static Map<String, Long> unservedTopics(DSLContext dsl) {
        return unservedTopics(dsl, DEFAULT_UNSERVED_AFTER, DEFAULT_SCAN_LIMIT);
    }
}
