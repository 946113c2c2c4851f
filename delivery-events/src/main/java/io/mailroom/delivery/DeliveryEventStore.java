package io.mailroom.delivery;

import io.mailroom.idempotency.RecordLookup;
import io.mailroom.outbox.EffectLookup;
import io.mailroom.outbox.admin.AuditTrail;

import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;

/**
 * Stores what providers report after accepting an email, once per delivery, in the caller's
 * transaction (a webhook request, a DSN piped in by a mail server).
 *
 * <p>Invariants:
 * <ul>
 *   <li><b>Once per delivery.</b> A delivery ({@code source}, {@code deliveryId}: the webhook-id) is
 *       stored whole or not at all; its first event's insert is the test, so a replayed or
 *       duplicated delivery, even one racing the first, stores nothing, changes no email and calls
 *       no listener (the loser of the race waits on the unique index and then finds the row).</li>
 *   <li><b>Nothing dropped.</b> An event whose email cannot be found is kept with a null key (an
 *       orphan, for operators); an event type no adapter maps is kept as {@code unknown}; provider
 *       text longer than a column is cut, never refused.</li>
 *   <li><b>Never backwards.</b> An email's delivery state ({@link DeliveryStates}) moves only to a higher
 *       {@link DeliveryKind#rank()}; the rank test is in the upsert's {@code DO UPDATE ... WHERE}, which
 *       is checked on the locked, latest row, so two deliveries racing for one email cannot undo each
 *       other. An event that did not move the state is stored with {@code applied = false} and
 *       still shows in the timeline.</li>
 * </ul>
 */
public final class DeliveryEventStore {

    private static final Logger log = LoggerFactory.getLogger(DeliveryEventStore.class);

    static final int MAX_SOURCE = 100;
    /** Characters of a delivery id (a webhook-id, a report's Message-ID). */
    public static final int MAX_DELIVERY_ID = 200;
    static final int MAX_PROVIDER_EVENT = 200;
    static final int MAX_PROVIDER_MESSAGE_ID = 500;
    static final int MAX_RECIPIENT = 320;
    static final int MAX_DIAGNOSTIC = 1000;
    static final int MAX_DESCRIPTION = 2000;
    static final int MAX_DETAIL = 2000;
    /** {@code audit_log.action} of an event naming another address than its email was sent to. */
    public static final String RECIPIENT_MISMATCH = "delivery_recipient_mismatch";
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = DeliveryJson.mapper();
    /** More events than this in one delivery is not a provider's webhook; refused rather than stored in part. */
    public static final int MAX_EVENTS_PER_DELIVERY = 1000;

    private final List<DeliveryEventListener> listeners;
    private final Clock clock;

    public DeliveryEventStore(List<DeliveryEventListener> listeners, Clock clock) {
        this.listeners = List.copyOf(Objects.requireNonNull(listeners, "listeners"));
        this.clock = clock == null ? Clock.systemUTC() : clock;
    }

    /**
     * What one call stored.
     *
     * @param replay  the delivery had been stored before: nothing was written
     * @param stored  events written
     * @param matched of those, events matched to an email
     * @param orphans of those, events matched to none
     */
    public record IngestResult(boolean replay, int stored, int matched, int orphans) {
    }

    /**
     * Stores one delivery's events once, matches each to its email, moves each email's delivery
     * state forward, and tells the listeners, all in {@code tx}.
     *
     * @throws IllegalArgumentException naming the argument when source, delivery id or the event
     *                                  list is missing or out of bounds
     */
    public IngestResult ingest(DSLContext tx, String source, String deliveryId, List<DeliveryEvent> events) {
        requireText("source", source, MAX_SOURCE);
        requireText("deliveryId", deliveryId, MAX_DELIVERY_ID);
        Objects.requireNonNull(events, "events");
        if (events.isEmpty()) {
            throw new IllegalArgumentException("a delivery must carry at least one event (source " + source
                    + ", delivery " + deliveryId + ")");
        }
        if (events.size() > MAX_EVENTS_PER_DELIVERY) {
            throw new IllegalArgumentException("a delivery carries " + events.size() + " events, more than "
                    + MAX_EVENTS_PER_DELIVERY + " (source " + source + ", delivery " + deliveryId + ")");
        }
        Instant now = clock.instant();
        int matched = 0;
        for (int seq = 0; seq < events.size(); seq++) {
            DeliveryEvent event = Objects.requireNonNull(events.get(seq), "event " + seq);
            Match match = match(tx, event);
            String address = normalizedOrNull(event.recipient());
            Long id = tx.insertInto(DELIVERY_EVENT)
                    .set(DELIVERY_EVENT.SOURCE, source)
                    .set(DELIVERY_EVENT.DELIVERY_ID, deliveryId)
                    .set(DELIVERY_EVENT.SEQ, seq)
                    .set(DELIVERY_EVENT.RECEIVED_AT, now)
                    .set(DELIVERY_EVENT.OCCURRED_AT, event.occurredAt())
                    .set(DELIVERY_EVENT.KIND, event.kind().dbValue())
                    .set(DELIVERY_EVENT.BOUNCE_TYPE, event.bounceType() == null ? null : event.bounceType().dbValue())
                    .set(DELIVERY_EVENT.PROVIDER_EVENT, cut(event.providerEvent(), MAX_PROVIDER_EVENT))
                    .set(DELIVERY_EVENT.PROVIDER_MESSAGE_ID, cut(event.providerMessageId(), MAX_PROVIDER_MESSAGE_ID))
                    .set(DELIVERY_EVENT.IDEMPOTENCY_KEY, match == null ? null : match.key())
                    .set(DELIVERY_EVENT.RECIPIENT, address != null ? address : cut(event.recipient(), MAX_RECIPIENT))
                    .set(DELIVERY_EVENT.DIAGNOSTIC_CODE, cut(event.diagnosticCode(), MAX_DIAGNOSTIC))
                    .set(DELIVERY_EVENT.DESCRIPTION, cut(event.description(), MAX_DESCRIPTION))
                    .set(DELIVERY_EVENT.APPLIED, false)
                    .set(DELIVERY_EVENT.TAGS, tagsJson(event))
                    .onConflict(DELIVERY_EVENT.SOURCE, DELIVERY_EVENT.DELIVERY_ID, DELIVERY_EVENT.SEQ).doNothing()
                    .returning(DELIVERY_EVENT.ID)
                    .fetchOptional(DELIVERY_EVENT.ID)
                    .orElse(null);
            if (id == null) {
                if (seq == 0) {
                    log.debug("Delivery {} of {} was stored before; nothing changed", deliveryId, source);
                    return new IngestResult(true, 0, 0, 0);
                }
                // A delivery is stored whole in one transaction, so its later events cannot exist
                // without its first: same id, different content is a sender's bug, not a replay.
                throw new IllegalStateException("delivery " + deliveryId + " of " + source + " has event " + seq
                        + " stored already but not its first; refusing to store it in part");
            }
            boolean applied = match != null && moveForward(tx, match.key(), event, now);
            // the recipient's own state, beside the email's (which a Cc's report may not move, the To's having gone further)
            boolean recipientMoved = match != null && address != null
                    && DeliveryRecipientStates.moveForward(tx, match.key(), address, event, detail(event), now);
            applied = applied || recipientMoved;
            if (applied) {
                tx.update(DELIVERY_EVENT).set(DELIVERY_EVENT.APPLIED, true).where(DELIVERY_EVENT.ID.eq(id)).execute();
            }
            if (match != null) {
                matched++;
            }
            DeliveryEventListener.StoredEvent stored = new DeliveryEventListener.StoredEvent(id, source, event, address,
                    match == null ? null : match.key(), match == null ? null : match.topic(), applied,
                    match == null || address == null ? null : sentTo(tx, match.key(), address));
            if (stored.recipientMismatch()) {
                recordMismatch(tx, stored, now);
            }
            for (DeliveryEventListener listener : listeners) {
                listener.onStored(tx, stored);
            }
        }
        int orphans = events.size() - matched;
        if (orphans > 0) {
            log.info("Delivery {} of {}: {} of {} events match no email; kept as orphans", deliveryId, source,
                    orphans, events.size());
        }
        return new IngestResult(false, events.size(), matched, orphans);
    }

    private record Match(String key, String topic) {
    }

    /**
     * The email an event is about: the idempotency key the provider echoed, when we have that
     * effect; else the provider's message id as the send stored it ({@code result_ref}), with or
     * without the angle brackets a Message-ID is written in, since providers report it either way.
     */
    private static Match match(DSLContext tx, DeliveryEvent event) {
        if (event.idempotencyKey() != null && !event.idempotencyKey().isBlank()) {
            String key = event.idempotencyKey().strip();
            Optional<String> topic = EffectLookup.topicOf(tx, key);
            if (topic.isPresent()) {
                return new Match(key, topic.get());
            }
        }
        Set<String> refs = messageIdForms(event.providerMessageId());
        for (String key : RecordLookup.keysByResultRef(tx, refs)) {
            Optional<String> topic = EffectLookup.topicOf(tx, key);
            if (topic.isPresent()) {
                return new Match(key, topic.get());
            }
        }
        return null;
    }

    /**
     * The address the email was sent to, as its send recorded it (the idempotency record's descriptor),
     * normalized: {@code reported} itself when it is any of the email's recipients (To, Cc or Bcc, the
     * descriptor's {@code recipients}), else its first To.
     */
    private static String sentTo(DSLContext tx, String key, String reported) {
        String list = RecordLookup.descriptorText(tx, key, "recipients");
        if (list != null) {
            try {
                for (var r : JSON.readTree(list)) {
                    if (reported.equals(normalizedOrNull(r.path("address").asText(null)))) {
                        return reported;
                    }
                }
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                // the dispatcher wrote it as JSON; a descriptor that is not leaves the first To to compare with
            }
        }
        return normalizedOrNull(RecordLookup.descriptorText(tx, key, "recipient"));
    }

    private static org.jooq.JSONB tagsJson(DeliveryEvent event) {
        if (event.tags().isEmpty()) {
            return null;
        }
        var node = JSON.createObjectNode();
        event.tags().forEach(node::put);
        return org.jooq.JSONB.valueOf(node.toString());
    }

    /**
     * The email's history says the event named another address: an audit trail entry (outbox-core's {@link AuditTrail}) on the
     * email's key, which the support console shows in its timeline. The reason has no addresses (the
     * console masks them by role); the detail keeps both for whoever may read it.
     */
    private static void recordMismatch(DSLContext tx, DeliveryEventListener.StoredEvent stored, Instant now) {
        log.info("Delivery event {} of {} names another address than email {} was sent to; the address it names is the one acted on",
                stored.eventId(), stored.source(), stored.idempotencyKey());
        var detail = JSON.createObjectNode()
                .put("eventId", stored.eventId()).put("reported", stored.address()).put("sentTo", stored.sentTo());
        AuditTrail.write(tx, new AuditTrail.NewEntry(now, "event:" + stored.source(), "provider", RECIPIENT_MISMATCH,
                stored.idempotencyKey(),
                "the " + stored.event().kind().dbValue() + " event names another address than the one"
                        + " the email was sent to; the address it names is the one acted on (suppressed for a hard bounce or"
                        + " a complaint), not the email's",
                detail.toString()));
    }

    static Set<String> messageIdForms(String providerMessageId) {
        Set<String> forms = new LinkedHashSet<>();
        if (providerMessageId == null || providerMessageId.isBlank()) {
            return forms;
        }
        String id = providerMessageId.strip();
        forms.add(id);
        if (id.startsWith("<") && id.endsWith(">") && id.length() > 2) {
            forms.add(id.substring(1, id.length() - 1));
        } else {
            forms.add("<" + id + ">");
        }
        return forms;
    }

    /** Moves the email's delivery state forward ({@link DeliveryStates}); true if it moved. */
    private static boolean moveForward(DSLContext tx, String key, DeliveryEvent event, Instant now) {
        return DeliveryStates.moveForward(tx, key, event, detail(event), now);
    }

    /** The kind's rank, doubled so a hard bounce can sit one step above a soft one. */
    static int rank(DeliveryKind kind, BounceType bounce) {
        return DeliveryStates.rank(kind, bounce);
    }

    /** What support reads beside the state: the bounce type and the provider's diagnostic. */
    static String detail(DeliveryEvent event) {
        String said = event.diagnosticCode() != null && !event.diagnosticCode().isBlank()
                ? event.diagnosticCode().strip()
                : event.description() == null || event.description().isBlank() ? null : event.description().strip();
        String text = event.bounceType() == null ? said
                : event.bounceType().dbValue() + " bounce" + (said == null ? "" : ": " + said);
        return cut(text, MAX_DETAIL);
    }

    private static String normalizedOrNull(String recipient) {
        if (recipient == null || recipient.isBlank()) {
            return null;
        }
        try {
            String normalized = Addresses.normalize(recipient);
            return normalized.length() <= MAX_RECIPIENT ? normalized : null;
        } catch (IllegalArgumentException e) {
            // kept as reported (cut) in the event row; no suppression can key on it
            return null;
        }
    }

    private static String cut(String text, int max) {
        if (text == null) {
            return null;
        }
        if (text.length() <= max) {
            return text;
        }
        int end = max - 1;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(0, end) + "…";
    }

    private static void requireText(String name, String value, int max) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " is required");
        }
        if (value.length() > max) {
            throw new IllegalArgumentException(name + " is longer than " + max + " characters");
        }
    }
}
