package io.mailroom.outbox.admin;

import io.mailroom.outbox.runtime.DispatcherRegistry;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_DISPATCHER;

/**
 * The registry of dispatchers as people read it ({@code outbox_dispatcher}, written by each
 * running dispatcher at every heartbeat): every row, live or not, and the topics with emails due
 * that no live dispatcher serves. Whether a row is live is decided by the database's clock
 * ({@code expires_at > now()}), the one every dispatcher's expiry was set by, never by the
 * reader's. A row whose dispatcher stopped without saying so stays, not live, for a day.
 */
public final class Dispatchers {

    private Dispatchers() {
    }

    /**
     * One dispatcher process, as of its last heartbeat.
     *
     * @param incarnation    the process among those of its worker id (a restart under the same id gets a new one)
     * @param topics         the topics it serves, sorted
     * @param live           whether its last heartbeat is recent enough, by the database's clock
     * @param claimsInFlight the claims it held at its last heartbeat
     * @param details        the JSON object's text its embedding process reported, or null
     */
    public record Entry(String workerId, String incarnation, String host, String version, List<String> topics,
                        Instant startedAt, Instant heartbeatAt, Instant expiresAt, boolean live, int claimsInFlight,
                        String details) {
        public Entry {
            topics = List.copyOf(topics);
        }
    }

    /**
     * The registry at one moment.
     *
     * @param at          the database's clock when it was read
     * @param dispatchers every row: the live ones first, then by worker id
     */
    public record Snapshot(Instant at, List<Entry> dispatchers) {
        public Snapshot {
            dispatchers = List.copyOf(dispatchers);
        }

        public long liveCount() {
            return dispatchers.stream().filter(Entry::live).count();
        }
    }

    /** Every registered dispatcher, read in the caller's transaction. */
    public static Snapshot list(DSLContext dsl) {
        var d = OUTBOX_DISPATCHER;
        Field<Instant> now = DSL.field("now()", SQLDataType.INSTANT);
        Field<Boolean> live = DSL.field(d.EXPIRES_AT.gt(now)).as("live");
        Instant at = dsl.select(now).fetchSingle().value1();
        List<Entry> entries = dsl.select(d.WORKER_ID, d.INCARNATION, d.HOST, d.VERSION, d.TOPICS, d.STARTED_AT,
                        d.HEARTBEAT_AT, d.EXPIRES_AT, live, d.CLAIMS_IN_FLIGHT, d.DETAILS)
                .from(d)
                .orderBy(live.desc(), d.WORKER_ID)
                .fetch(r -> new Entry(r.value1(), r.value2(), r.value3(), r.value4(),
                        r.value5() == null ? List.of() : Arrays.stream(r.value5()).sorted().toList(),
                        r.value6(), r.value7(), r.value8(), Boolean.TRUE.equals(r.value9()), r.value10(),
                        text(r.value11())));
        return new Snapshot(at, entries);
    }

    /**
     * Topics with emails due for over a minute that no live dispatcher serves, with how many wait
     * on each among the oldest due (see {@link DispatcherRegistry#unservedTopics(DSLContext)}).
     */
    public static Map<String, Long> unservedTopics(DSLContext dsl) {
        return DispatcherRegistry.unservedTopics(dsl);
    }

    private static String text(JSONB json) {
        return json == null ? null : json.data();
    }
}
