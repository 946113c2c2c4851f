package io.mailroom.delivery;

import io.mailroom.db.jooq.tables.DeliveryEvent;
import io.mailroom.db.jooq.tables.records.DeliveryEventRecord;
import org.jooq.Condition;
import org.jooq.DSLContext;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;

/**
 * Reads of the stored delivery reports ({@code delivery_event}) for the modules that show an email's
 * story: the reports of given emails, and the reports that matched no email. In the caller's
 * transaction; never locks.
 */
public final class DeliveryEventHistory {

    private static final DeliveryEvent D = DELIVERY_EVENT;

    private DeliveryEventHistory() {
    }

    /**
     * One stored report.
     *
     * @param key     the email it matched, null for an orphan
     * @param applied whether it moved the email's delivery state or suppression
     */
    public record Stored(long id, String source, String deliveryId, Instant receivedAt, Instant occurredAt, String kind,
                         String bounceType, String providerEvent, String providerMessageId, String key, String recipient,
                         String diagnosticCode, String description, boolean applied, Map<String, String> tags) {

        /** A report without echoed tags. */
        public Stored(long id, String source, String deliveryId, Instant receivedAt, Instant occurredAt, String kind,
                      String bounceType, String providerEvent, String providerMessageId, String key, String recipient,
                      String diagnosticCode, String description, boolean applied) {
            this(id, source, deliveryId, receivedAt, occurredAt, kind, bounceType, providerEvent, providerMessageId, key,
                    recipient, diagnosticCode, description, applied, Map.of());
        }
    }

    /** The reports of these emails, in the order they arrived. */
    public static List<Stored> ofKeys(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        return tx.selectFrom(D).where(D.IDEMPOTENCY_KEY.in(keys)).orderBy(D.RECEIVED_AT, D.ID)
                .fetch(DeliveryEventHistory::stored);
    }

    /** Reports that matched no email, newest first, before the id {@code beforeId} (exclusive) when given. */
    public static List<Stored> orphans(DSLContext tx, Long beforeId, int limit) {
        Condition where = D.IDEMPOTENCY_KEY.isNull();
        if (beforeId != null) {
            where = where.and(D.ID.lt(beforeId));
        }
        return tx.selectFrom(D).where(where).orderBy(D.ID.desc()).limit(limit).fetch(DeliveryEventHistory::stored);
    }

    private static Stored stored(DeliveryEventRecord r) {
        return new Stored(r.getId(), r.getSource(), r.getDeliveryId(), r.getReceivedAt(), r.getOccurredAt(), r.getKind(),
                r.getBounceType(), r.getProviderEvent(), r.getProviderMessageId(), r.getIdempotencyKey(), r.getRecipient(),
                r.getDiagnosticCode(), r.getDescription(), r.getApplied(), tags(r.getTags()));
    }

    private static Map<String, String> tags(org.jooq.JSONB json) {
        if (json == null) {
            return Map.of();
        }
        Map<String, String> out = new java.util.LinkedHashMap<>();
        try {
            DeliveryJson.mapper().readTree(json.data()).properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return Map.of(); // the column's check keeps it an object: cannot happen
        }
        return out;
    }
}
