package io.mailroom.delivery.suppression;

import io.mailroom.outbox.admin.AuditTrail;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.mailroom.db.jooq.tables.records.SuppressionRecord;
import io.mailroom.delivery.Addresses;
import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryJson;
import io.mailroom.delivery.DeliveryEventListener;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.SOFT_BOUNCE_RUN;
import static io.mailroom.db.jooq.Tables.SUPPRESSION;

/**
 * The suppression list: addresses no email is sent to, checked before any provider is contacted.
 *
 * <p>It fills itself from delivery events, in the transaction that stores them: a hard bounce or a
 * complaint suppresses the address at once; a soft bounce counts toward a run that suppresses it at
 * {@link SuppressionConfig#softBounceLimit()} in a row, and a delivery to the address ends the run.
 * An orphan event (its email unknown to us: sent before Mailroom, or its history already gone)
 * suppresses too: the request was signed by the provider, and the fact is about the address, not
 * the email. People add and lift entries with a reason; each such change writes an audit trail entry (outbox-core's AuditTrail)
 * in the same transaction, and a lifted entry is kept with who lifted it and why.
 *
 * <p>At most one active entry per (address, reason), held by a partial unique index, so a second
 * hard bounce for a suppressed address changes nothing, and a per-topic policy can look past a
 * complaint while the same address's hard bounce still stops it.
 */
public final class SuppressionList implements DeliveryEventListener {

    private static final Logger log = LoggerFactory.getLogger(SuppressionList.class);
    private static final ObjectMapper JSON = DeliveryJson.mapper();
    private static final DateTimeFormatter DAY = DateTimeFormatter.ISO_LOCAL_DATE.withZone(ZoneOffset.UTC);
    static final int MAX_REASON = 2000;
    public static final String ACTION_ADD = "suppression_add";
    public static final String ACTION_LIFT = "suppression_lift";
    public static final int MAX_PAGE = 500;

    private final SuppressionConfig config;
    private final Clock clock;

    public SuppressionList(SuppressionConfig config, Clock clock) {
        this.config = Objects.requireNonNull(config, "config");
        this.clock = clock == null ? Clock.systemUTC() : clock;
    }

    // ------------------------------------------------------------------ from delivery events

    @Override
    public void onStored(DSLContext tx, StoredEvent stored) {
        String address = stored.address();
        if (address == null) {
            return;
        }
        DeliveryEvent event = stored.event();
        Instant at = event.occurredAt() != null ? event.occurredAt() : clock.instant();
        String by = "event:" + stored.source();
        if (event.kind() == DeliveryKind.BOUNCED && event.bounceType() == BounceType.HARD) {
            suppress(tx, address, SuppressionReason.HARD_BOUNCE, said(event), stored.eventId(), by);
        } else if (event.kind() == DeliveryKind.COMPLAINED) {
            suppress(tx, address, SuppressionReason.COMPLAINT, said(event), stored.eventId(), by);
        } else if (event.kind() == DeliveryKind.BOUNCED) {
            softBounce(tx, address, at, stored.eventId(), said(event), by);
        } else if (event.kind() == DeliveryKind.DELIVERED) {
            // a delivery ends the run, unless it is older news than the run's last bounce
            tx.deleteFrom(SOFT_BOUNCE_RUN).where(SOFT_BOUNCE_RUN.ADDRESS.eq(address))
                    .and(SOFT_BOUNCE_RUN.LAST_AT.le(at)).execute();
        }
    }

    private void softBounce(DSLContext tx, String address, Instant at, long eventId, String said, String by) {
        var r = SOFT_BOUNCE_RUN;
        var run = tx.insertInto(r)
                .set(r.ADDRESS, address).set(r.BOUNCES, 1).set(r.FIRST_AT, at).set(r.LAST_AT, at).set(r.LAST_EVENT_ID, eventId)
                .onConflict(r.ADDRESS).doUpdate()
                .set(r.BOUNCES, r.BOUNCES.plus(1))
                .set(r.LAST_AT, DSL.greatest(r.LAST_AT, DSL.val(at)))
                .set(r.LAST_EVENT_ID, eventId)
                .returning(r.BOUNCES, r.FIRST_AT)
                .fetchOne();
        if (run != null && run.getBounces() >= config.softBounceLimit()) {
            suppress(tx, address, SuppressionReason.SOFT_BOUNCES, run.getBounces() + " soft bounces since "
                    + DAY.format(run.getFirstAt()) + (said == null ? "" : ", the last: " + said), eventId, by);
        }
    }

    /** Inserts an active entry unless the address already has one for that reason; true if inserted. */
    private boolean suppress(DSLContext tx, String address, SuppressionReason reason, String detail, Long eventId, String by) {
        int n = tx.insertInto(SUPPRESSION)
                .set(SUPPRESSION.ADDRESS, address)
                .set(SUPPRESSION.REASON, reason.dbValue())
                .set(SUPPRESSION.DETAIL, cut(detail))
                .set(SUPPRESSION.EVENT_ID, eventId)
                .set(SUPPRESSION.CREATED_AT, clock.instant())
                .set(SUPPRESSION.CREATED_BY, by)
                .onConflict(SUPPRESSION.ADDRESS, SUPPRESSION.REASON).where(SUPPRESSION.LIFTED_AT.isNull())
                .doNothing()
                .execute();
        if (n == 1) {
            // ids only: the address came in a webhook body, and nothing of a body reaches a log line
            log.info("Suppressed an address ({}, by {}, event {})", reason.words(), by, eventId);
        }
        return n == 1;
    }

    private static String said(DeliveryEvent e) {
        if (e.diagnosticCode() != null && !e.diagnosticCode().isBlank()) {
            return e.diagnosticCode().strip();
        }
        return e.description() == null || e.description().isBlank() ? null : e.description().strip();
    }

    // ------------------------------------------------------------------ before a send

    /**
     * The active entries of these addresses, in one query for a whole claimed batch.
     *
     * @param addresses normalized addresses ({@link Addresses#normalize})
     * @return by address, only addresses that have any; each list oldest first
     */
    public Map<String, List<Suppression>> active(DSLContext tx, Collection<String> addresses) {
        Set<String> distinct = new LinkedHashSet<>(addresses);
        if (distinct.isEmpty()) {
            return Map.of();
        }
        // an erased address is kept under its keyed hash (V20): matched as well as the address itself
        Map<String, String> addressOfHash = new java.util.HashMap<>();
        for (String a : distinct) {
            addressOfHash.put(config.erasureKey().hash(tx, a), a);
        }
        Map<String, List<Suppression>> found = new LinkedHashMap<>();
        for (Active r : ACTIVE_SQL.query(tx, SuppressionList::active, distinct.toArray(String[]::new),
                addressOfHash.keySet().toArray(String[]::new))) {
            Suppression s = r.suppression();
            String a = r.addressHash() != null && !distinct.contains(s.address()) ? addressOfHash.get(r.addressHash()) : s.address();
            if (a != null) {
                found.computeIfAbsent(a, x -> new java.util.ArrayList<>()).add(s);
            }
        }
        found.replaceAll((a, list) -> List.copyOf(list));
        return found;
    }

    /**
     * The look-up before a send, once per claimed batch, as a finished text ({@link HotSql}): built
     * through jOOQ it was 8 % of the dispatcher's CPU in a profile of an HTTP drain. {@code = any(array)}:
     * one statement text for every batch size (an IN list made one per size, each parsed and planned
     * afresh), as the claim and the completion's statements are. The columns are the generated
     * record's, in its order.
     */
    static final String ACTIVE = """
            SELECT s.id, s.address, s.reason, s.detail, s.event_id, s.created_at, s.created_by, s.lifted_at,
                   s.lifted_by, s.lift_reason, s.address_hash
            FROM {schema}.suppression AS s
            WHERE (s.address = any(?::varchar[]) OR s.address_hash = any(?::varchar[])) AND s.lifted_at IS NULL
            ORDER BY s.id""";
    private static final HotSql ACTIVE_SQL = HotSql.of(ACTIVE, SqlClock.database());

    /** A row of {@link #ACTIVE}: the entry and the hash it is kept under once erased. */
    private record Active(Suppression suppression, String addressHash) {
    }

    private static Active active(ResultSet rs) throws SQLException {
        return new Active(new Suppression(rs.getLong(1), rs.getString(2), SuppressionReason.fromDb(rs.getString(3)),
                rs.getString(4), rs.getObject(5, Long.class), HotSql.instant(rs, 6), rs.getString(7), HotSql.instant(rs, 8),
                rs.getString(9), rs.getString(10)), rs.getString(11));
    }

    /** The keyed hash an erased address's suppression is kept under ({@link ErasureKey}). */
    public String hash(DSLContext tx, String normalizedAddress) {
        return config.erasureKey().hash(tx, normalizedAddress);
    }

    /** Entries of an address: by the address itself, or by its hash once it was erased. */
    private Condition ofAddress(DSLContext tx, String normalizedAddress) {
        return SUPPRESSION.ADDRESS.eq(normalizedAddress).or(SUPPRESSION.ADDRESS_HASH.eq(hash(tx, normalizedAddress)));
    }

    /** The entry that stops a send under {@code policy}, the most serious first (hard bounce, then older). */
    public static Optional<Suppression> blocking(List<Suppression> active, SuppressionPolicy policy) {
        if (active == null) {
            return Optional.empty();
        }
        return active.stream().filter(s -> s.active() && policy.blocks(s.reason()))
                .min(java.util.Comparator.comparing((Suppression s) -> s.reason().ordinal()).thenComparing(Suppression::id));
    }

    // ------------------------------------------------------------------ people's actions

    /**
     * Suppresses an address by hand.
     *
     * @throws SuppressionException naming the field: not an address, no reason, or already suppressed by hand
     */
    public Suppression add(DSLContext tx, String address, String reason, String actor, String role) {
        String a = address(address);
        String why = reason(reason);
        if (!suppress(tx, a, SuppressionReason.MANUAL, why, null, actor)) {
            throw SuppressionException.conflict("address", a + " is already suppressed by hand");
        }
        audit(tx, actor, role, ACTION_ADD, why, a);
        return tx.selectFrom(SUPPRESSION).where(SUPPRESSION.ADDRESS.eq(a)).and(SUPPRESSION.REASON.eq(SuppressionReason.MANUAL.dbValue()))
                .and(SUPPRESSION.LIFTED_AT.isNull()).fetchOptional().map(SuppressionList::of).orElseThrow();
    }

    /**
     * Lifts every active entry of an address (and forgets its soft-bounce run), keeping them as history.
     *
     * @return the entries lifted
     * @throws SuppressionException naming the field: not an address, no reason, or not suppressed
     */
    public List<Suppression> lift(DSLContext tx, String address, String reason, String actor, String role) {
        String a = address(address);
        String why = reason(reason);
        List<Suppression> lifted = tx.update(SUPPRESSION)
                .set(SUPPRESSION.LIFTED_AT, clock.instant())
                .set(SUPPRESSION.LIFTED_BY, actor)
                .set(SUPPRESSION.LIFT_REASON, why)
                .where(ofAddress(tx, a)).and(SUPPRESSION.LIFTED_AT.isNull())
                .returning()
                .fetch().map(SuppressionList::of);
        if (lifted.isEmpty()) {
            throw SuppressionException.conflict("address", a + " is not suppressed");
        }
        tx.deleteFrom(SOFT_BOUNCE_RUN).where(SOFT_BOUNCE_RUN.ADDRESS.eq(a)).execute();
        audit(tx, actor, role, ACTION_LIFT, why, a);
        // masked as the dispatcher masks a recipient in its log: the address itself is in the audit row
        log.info("Suppression of {} lifted by {}", Addresses.masked(a), actor);
        return lifted;
    }

    /**
     * A page of the list, newest first.
     *
     * @param address     an address (normalized here) or null for all
     * @param withLifted  include lifted entries
     * @param beforeId    the last id of the previous page, or null
     */
    public List<Suppression> list(DSLContext dsl, String address, boolean withLifted, Long beforeId, int limit) {
        if (limit < 1 || limit > MAX_PAGE) {
            throw SuppressionException.invalid("limit", "limit must be 1.." + MAX_PAGE + ", was " + limit);
        }
        Condition where = DSL.trueCondition();
        if (address != null && !address.isBlank()) {
            where = where.and(ofAddress(dsl, address(address)));
        }
        if (!withLifted) {
            where = where.and(SUPPRESSION.LIFTED_AT.isNull());
        }
        if (beforeId != null) {
            where = where.and(SUPPRESSION.ID.lt(beforeId));
        }
        return dsl.selectFrom(SUPPRESSION).where(where).orderBy(SUPPRESSION.ID.desc()).limit(limit).fetch()
                .map(SuppressionList::of);
    }

    private static void audit(DSLContext tx, String actor, String role, String action, String reason, String address) {
        try {
            AuditTrail.write(tx, new AuditTrail.NewEntry(null, Objects.requireNonNull(actor, "actor"),
                    Objects.requireNonNull(role, "role"), action, null, reason,
                    JSON.writeValueAsString(Map.of("address", address))));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot write an address as JSON", e);
        }
    }

    private static String address(String address) {
        if (address == null || address.isBlank()) {
            throw SuppressionException.invalid("address", "address is required");
        }
        try {
            return Addresses.normalize(address);
        } catch (IllegalArgumentException e) {
            throw SuppressionException.invalid("address", e.getMessage());
        }
    }

    private static String reason(String reason) {
        if (reason == null || reason.isBlank()) {
            throw SuppressionException.invalid("reason", "a reason is required");
        }
        if (reason.length() > MAX_REASON) {
            throw SuppressionException.invalid("reason", "reason is longer than " + MAX_REASON + " characters");
        }
        return reason.strip();
    }

    private static String cut(String s) {
        return s == null || s.length() <= MAX_REASON ? s : s.substring(0, MAX_REASON - 1) + "…";
    }

    static Suppression of(SuppressionRecord r) {
        return new Suppression(r.getId(), r.getAddress(), SuppressionReason.fromDb(r.getReason()), r.getDetail(),
                r.getEventId(), r.getCreatedAt(), r.getCreatedBy(), r.getLiftedAt(), r.getLiftedBy(), r.getLiftReason());
    }
}
