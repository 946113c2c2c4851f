package io.mailroom.support;

import io.mailroom.db.sql.Redaction;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.delivery.Addresses;
import io.mailroom.delivery.DeliveryErasure;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.email.api.SearchTerms;
import io.mailroom.email.dispatch.RenderingErasure;
import io.mailroom.idempotency.RecordErasure;
import io.mailroom.outbox.admin.EffectErasure;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Erases an address on request (a customer's right to erasure), in one transaction across the
 * owners of the history: outbox-core ({@link EffectErasure}: queue, effects, terms, attempts, audit),
 * idempotency-store ({@link RecordErasure}), email-dispatcher ({@link RenderingErasure}) and
 * delivery-events ({@link DeliveryErasure}: events, states, suppressions). Support names no table.
 *
 * <p><b>Which emails.</b> Those kept under the term {@code to:<address>} (the term index); the queued
 * messages whose payload holds the address (a scan of the hot queue: legacy payloads, reply-to, data);
 * and those whose delivery events name it as recipient (its index), of which those whose send
 * recorded it as recipient count as sent to it. An email sent to it loses recipient, name, payload
 * data and rendering; one that only mentions it has the address and the names masked. Keys, statuses,
 * counts and times stay.
 *
 * <p><b>Waiting and running emails.</b> The queue rows of those emails are locked ({@code NOWAIT}, so
 * no dispatcher can claim them meanwhile). One being sent right now refuses the erasure (409, try
 * again in a moment: its sender would write the address back). One to the address still waiting is
 * cancelled, with its own audit entry, so it is never sent.
 *
 * <p><b>Suppression.</b> An entry in force stays in force under the keyed hash of the address, which
 * the dispatcher's check matches as well as the address ({@link SuppressionList#active}).
 *
 * <p><b>Audit.</b> One entry for the erasure (its id, the keyed hash, the counts; never the address)
 * and one per email touched; the reason given is masked like the rest.
 */
final class Erasures {

    private static final Logger log = LoggerFactory.getLogger(Erasures.class);

    /** An erasure scans the hot queue once: longer than a page may take. */
    static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(60);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SupportTx db;
    private final SupportStore store;
    private final SuppressionList suppressions;

    Erasures(SupportTx db, SupportStore store, SuppressionList suppressions) {
        this.db = db;
        this.store = store;
        this.suppressions = suppressions;
    }

    ErasureResult erase(Actor actor, String rawAddress, String rawReason) {
        Roles.require(actor, Role.SUPPORT);
        String address = address(rawAddress);
        String reason = Params.reason(SupportParams.REASON, rawReason, true);
        String id = HexFormat.of().formatHex(randomBytes());
        for (int attempt = 0; ; attempt++) {
            try {
                ErasureResult result = db.write(tx -> erase(tx, actor, address, reason, id), STATEMENT_TIMEOUT);
                log.info("Erasure {} by {} ({}): {} email(s), {} mentioning, {} cancelled, suppression kept by hash: {}",
                        id, actor.name(), actor.role().word(), result.emails(), result.emailsMentioning(),
                        result.cancelled().size(), result.suppressionKeptByHash());
                return result;
            } catch (RuntimeException e) {
                if (!SqlStates.is(e, SqlStates.LOCK_NOT_AVAILABLE)) {
                    throw e;
                }
                if (attempt >= SupportActions.BUSY_RETRIES) {
                    throw new HttpFailure(409, "busy", "an email to this address is being worked on right now; nothing was"
                            + " erased, try again in a moment", null);
                }
                pause(SupportActions.BUSY_BACKOFF.toMillis() << attempt);
            }
        }
    }

    private ErasureResult erase(DSLContext tx, Actor actor, String address, String reason, String id) {
        Redaction base = new Redaction(address, List.of(), Redaction.marker(id));
        Set<String> recipient = new TreeSet<>(EffectErasure.keysWithTerm(tx, SearchTerms.term(SearchTerms.TO, address)));
        List<EffectErasure.Queued> queued = EffectErasure.queuedMentioning(tx, base);
        Set<String> mentioning = new TreeSet<>();
        List<String> names = new ArrayList<>();
        for (EffectErasure.Queued q : queued) {
            (q.recipient() ? recipient : mentioning).add(q.key());
            names.addAll(q.names());
        }
        mentioning.addAll(DeliveryErasure.keysOfEventsTo(tx, address));
        // a send that recorded the address as its recipient was to it, term or not (emails queued before terms)
        recipient.addAll(RecordErasure.sentTo(tx, mentioning, address));
        mentioning.removeAll(recipient);
        names.addAll(RecordErasure.recipientNames(tx, recipient));
        Redaction r = base.withNames(names);

        Set<String> all = new TreeSet<>(recipient);
        all.addAll(mentioning);
        Map<String, String> queueStatus = EffectErasure.lockQueued(tx, all);
        List<String> running = queueStatus.entrySet().stream().filter(e -> e.getValue().equals("running"))
                .map(Map.Entry::getKey).toList();
        if (!running.isEmpty()) {
            throw new HttpFailure(409, "busy", "email " + String.join(", ", running) + " holds this address and is being"
                    + " sent right now; nothing was erased, try again in a moment", null);
        }
        List<String> cancelled = EffectErasure.cancelPending(tx, recipient);

        String hash = suppressions.hash(tx, address);
        EffectErasure.Erased effects = EffectErasure.erase(tx, r, recipient, mentioning, queued, "erased:" + hash);
        RecordErasure.erase(tx, r, recipient, mentioning);
        int renderings = RenderingErasure.erase(tx, r, recipient, mentioning);
        // a captured message cannot be redacted part by part and stay the message that was built: it goes
        io.mailroom.email.transport.capture.CapturedMail.erase(tx, java.util.stream.Stream.concat(recipient.stream(),
                mentioning.stream()).distinct().toList());
        // an invoice to the address is about its holder: its refs go now, its content with the next retention run
        int attachments = io.mailroom.email.api.AttachmentStore.erase(tx, recipient);
        DeliveryErasure.Erased delivery = DeliveryErasure.erase(tx, r, hash, all);

        String why = r.apply(reason);
        for (String key : cancelled) {
            store.insertAudit(tx, actor, AuditActions.CANCEL, key, why,
                    SupportJson.object(Map.of("from", "pending", "erasure", id)));
        }
        for (String key : all) {
            Map<String, Object> detail = new LinkedHashMap<>();
            detail.put("erasure", id);
            detail.put("recipient", recipient.contains(key));
            store.insertAudit(tx, actor, AuditActions.ERASE, key, why, SupportJson.object(detail));
        }
        ErasureResult result = new ErasureResult(id, r.marker(), recipient.size(), mentioning.size(), List.copyOf(all),
                cancelled, renderings, effects.attempts(), delivery.events(), delivery.suppressions(), delivery.keptByHash(),
                effects.auditEntries());
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("erasure", id);
        detail.put("addressHash", hash);
        detail.put("emails", result.emails());
        detail.put("emailsMentioning", result.emailsMentioning());
        detail.put("cancelled", cancelled.size());
        detail.put("renderings", renderings);
        detail.put("attachments", attachments);
        detail.put("deliveryEvents", delivery.events());
        detail.put("suppressions", delivery.suppressions());
        detail.put("suppressionKeptByHash", delivery.keptByHash());
        store.insertAudit(tx, actor, AuditActions.ERASURE, null, why, SupportJson.object(detail));
        return result;
    }

    private static String address(String raw) {
        if (raw == null || raw.isBlank()) {
            throw new InvalidParameterException(SupportParams.ADDRESS, "address is required: the email address to erase");
        }
        String a;
        try {
            a = Addresses.normalize(raw);
        } catch (IllegalArgumentException e) {
            throw new InvalidParameterException(SupportParams.ADDRESS, "address is not an email address");
        }
        if (a.length() > 320) {
            throw new InvalidParameterException(SupportParams.ADDRESS, "address must be at most 320 characters");
        }
        return a;
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[5];
        RANDOM.nextBytes(b);
        return b;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HttpFailure(409, "busy", "interrupted while waiting for a busy email; nothing was erased", null);
        }
    }
}
