package io.mailroom.support;

import io.mailroom.db.sql.SqlStates;
import io.mailroom.idempotency.EffectRecord;
import io.mailroom.idempotency.EffectState;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.DuplicateIdempotencyKeyException;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.admin.OutboxControl;
import io.mailroom.outbox.OutboxEnqueuer;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What support and operators can do to an email or to dispatching: retry, resend, confirm-sent,
 * cancel, close (won't send), pause and resume. Every action checks the actor's role, locks what it
 * changes with {@code NOWAIT} (a row a dispatcher holds answers {@link ActionResult.Busy} at once,
 * never a hang; tried again a bounded number of times) and writes its {@code audit_log} row in the
 * same transaction as the change: an action that is not in the audit log did not happen.
 */
final class SupportActions {

    private static final Logger log = LoggerFactory.getLogger(SupportActions.class);

    static final int BUSY_RETRIES = MessageActions.DEFAULT_BUSY_RETRIES;
    static final Duration BUSY_BACKOFF = MessageActions.DEFAULT_BUSY_BACKOFF;
    private static final Pattern RESEND_SUFFIX = Pattern.compile("^(.+)-resend-[0-9]{1,9}$");

    private final SupportTx db;
    private final SupportStore store;
    private final SupportQueries queries;
    private final SupportViews views;
    private final MessageActions messageActions;
    private final OutboxControl control;
    private final IdempotencyStore idempotency = new IdempotencyStore();
    private final OutboxEnqueuer enqueuer = new OutboxEnqueuer();

    SupportActions(SupportTx db, SupportStore store, SupportQueries queries, SupportViews views,
                   MessageActions messageActions, OutboxControl control) {
        this.db = db;
        this.store = store;
        this.queries = queries;
        this.views = views;
        this.messageActions = messageActions;
        this.control = control;
    }

    /**
     * A failed (or waiting) email is tried again now, with one more attempt allowed. Not one that was
     * resent: its resend is its second chance, and retrying it would send the email twice. That is
     * checked after the row lock, so a resend committed first is seen (it holds the same lock).
     */
    public ActionResult retry(Actor actor, String key, String reason) {
        return retry(actor, key, reason, null);
    }

    /** {@link #retry} as one step of a bulk action: {@code bulk} re-checks its filter under the row lock. */
    ActionResult retry(Actor actor, String key, String reason, InBulk bulk) {
        Roles.require(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String why = Params.reason(SupportParams.REASON, reason, false);
        // The status before, for the audit row (the queue chart counts failed emails put back).
        String before = db.read(tx -> store.effectStatus(tx, k));
        if (before == null) {
            return notFound(k);
        }
        MessageActions.Result r;
        try {
            r = messageActions.retryNow(k, InBulk.precondition(bulk, k), tx -> {
                List<String> resends = store.resendKeys(tx, k);
                if (!resends.isEmpty()) {
                    throw new Refused("email " + k + " was resent as " + String.join(", ", resends)
                            + ", so retrying it would send it twice; close it instead");
                }
                // read under the row lock: a lift committed before it is seen, one after it comes too late for this retry
                SupportStore.EmailRow row = store.email(tx, k);
                refuseErased(row == null ? null : SupportViews.firstNonNull(row.descriptorRecipient(), row.payloadEmail()), k);
                SuppressionNote suppression = row == null ? null : views.suppressionsOf(tx, List.of(row)).get(k);
                if (suppression != null && suppression.blocksRetry()) {
                    throw new Refused(ApiError.SUPPRESSED, suppression.retryRefusal(k));
                }
                store.insertAudit(tx, actor, AuditActions.RETRY, k, why, SupportJson.object(InBulk.detail(bulk, Map.of("from", before))));
            });
        } catch (Refused e) {
            return new ActionResult.NotAllowed(k, EmailStatus.derive(before, null), e.getMessage(), e.code);
        }
        return result(AuditActions.RETRY, actor, k, r, null, "only a failed or waiting email can be retried", bulk);
    }

    /**
     * Sends an email again as a new business effect, with a new key ({@code email-order-102-resend-1})
     * and the same content: a sent email, or one in review (which is then closed as failed in the
     * same transaction, so it can never go out later as well). The reason is required.
     */
    public ActionResult resend(Actor actor, String key, String reason) {
        return resend(actor, key, reason, null);
    }

    /** {@link #resend} as one step of a bulk action: only from review, {@code bulk} re-checking its filter under the lock. */
    ActionResult resend(Actor actor, String key, String reason, InBulk bulk) {
        Roles.require(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String why = Params.reason(SupportParams.REASON, reason, true);
        String status = db.read(tx -> store.effectStatus(tx, k));
        if (status == null) {
            return notFound(k);
        }
        try {
            if (status.equals("review")) {
                String[] newKey = new String[1];
                // closeReview applies only to a message in review, so that is the state it is resent from
                MessageActions.Result r = messageActions.closeReview(k, InBulk.precondition(bulk, k), tx -> {
                    newKey[0] = createResend(tx, actor, k, why, MessageStatus.REVIEW.sql(), bulk);
                });
                return result(AuditActions.RESEND, actor, k, r, newKey[0], "only a sent email or one in review can be resent", bulk);
            }
            if (status.equals("done") && bulk == null) {
                ActionResult r = withBusyRetries(k, () -> db.write(tx -> {
                    SupportStore.ResendSource src = store.lockEffect(tx, k);
                    if (src == null) {
                        return notFound(k);
                    }
                    if (!src.status().equals("done")) {
                        return notAllowed(k, src.status(), null, "only a sent email or one in review can be resent");
                    }
                    return new ActionResult.Applied(AuditActions.RESEND, null, createResend(tx, actor, k, why, src.status(), null));
                }));
                if (r instanceof ActionResult.Applied a) {
                    log.info("{} on {} by {} ({}): new email {}", a.action(), k, actor.name(), actor.role().word(), a.newKey());
                    return new ActionResult.Applied(a.action(), fresh(k), a.newKey());
                }
                if (r instanceof ActionResult.Busy) {
                    log.info("{} on {} by {}: busy", AuditActions.RESEND, k, actor.name());
                }
                return r;
            }
        } catch (Refused e) {
            return new ActionResult.NotAllowed(k, EmailStatus.derive(status, null), e.getMessage());
        } catch (DuplicateIdempotencyKeyException e) {
            // only if a key of this form was made outside this service: the caller may simply try again
            log.info("Resend of {} met an existing key {}", k, e.getMessage());
            return new ActionResult.Busy(k);
        }
        return notAllowed(k, status, null, "only a sent email or one in review can be resent; a failed one can be retried");
    }

    /**
     * An email in review is confirmed as sent (e.g. the customer has it). Its idempotency record,
     * when the outcome was unknown, becomes succeeded with the provider message id if given.
     */
    public ActionResult confirmSent(Actor actor, String key, String providerMessageId, String reason) {
        Roles.require(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String messageId = Params.providerMessageId(SupportParams.PROVIDER_MESSAGE_ID, providerMessageId);
        String why = Params.reason(SupportParams.REASON, reason, false);
        MessageActions.Result r = messageActions.confirmDone(k, tx -> {
            Optional<EffectRecord> record = idempotency.find(tx, k);
            String before = record.map(rec -> rec.state().dbValue()).orElse(null);
            if (record.isPresent()) {
                EffectState state = record.get().state();
                // fenced by the reservation read here: a newer attempt's record is not resolved blindly
                int reservation = record.get().reservations();
                if (state == EffectState.RESERVED) {
                    // reserved but never recorded is an unknown outcome too; say so, then resolve it
                    idempotency.markAmbiguous(tx, k, reservation, "outcome unknown; resolved by " + actor.name());
                    state = EffectState.AMBIGUOUS;
                }
                if (state == EffectState.AMBIGUOUS) {
                    idempotency.confirmSucceeded(tx, k, reservation, messageId, actor.name());
                }
            }
            Map<String, Object> detail = new LinkedHashMap<>();
            detail.put("from", "review");
            detail.put("providerMessageId", messageId);
            detail.put("deliveryRecord", before);
            store.insertAudit(tx, actor, AuditActions.CONFIRM_SENT, k, why, SupportJson.object(detail));
        });
        return result(AuditActions.CONFIRM_SENT, actor, k, r, null, "only an email in review can be confirmed as sent");
    }

    /** A waiting email is cancelled: it will not be sent. */
    public ActionResult cancel(Actor actor, String key, String reason) {
        Roles.require(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String why = Params.reason(SupportParams.REASON, reason, false);
        MessageActions.Result r = messageActions.cancel(k, tx -> store.insertAudit(tx, actor, AuditActions.CANCEL, k, why,
                SupportJson.object(Map.of("from", "pending"))));
        return result(AuditActions.CANCEL, actor, k, r, null, "only a waiting email can be cancelled");
    }

    /**
     * Closes an email as "won't send", with a reason (required): a failed one, or one in review, the
     * states in which no send can happen any more without a person and no claim is live (a pending
     * email is cancelled instead; a running one belongs to its dispatcher). It ends closed for good:
     * no action opens it again, and retention removes it like other finished emails. One in review
     * whose delivery record says the provider accepted it was sent, so it is confirmed, not closed.
     * The delivery record is left as it is, so an unknown outcome stays visible in the history.
     */
    public ActionResult close(Actor actor, String key, String reason) {
        return close(actor, key, reason, null);
    }

    /** {@link #close} as one step of a bulk action: {@code bulk} re-checks its filter under the row lock. */
    ActionResult close(Actor actor, String key, String reason, InBulk bulk) {
        Roles.require(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String why = Params.reason(SupportParams.REASON, reason, true);
        MessageStatus[] was = new MessageStatus[1];
        MessageActions.Result r;
        try {
            r = messageActions.close(k, InBulk.precondition(bulk, k), (tx, from) -> {
                was[0] = from;
                Optional<EffectRecord> record = idempotency.find(tx, k);
                if (record.isPresent() && record.get().state() == EffectState.SUCCEEDED) {
                    throw new Refused("the provider accepted " + k + " (its delivery record says succeeded), so it was sent; "
                            + "confirm it as sent instead of closing it");
                }
                Map<String, Object> detail = new LinkedHashMap<>();
                detail.put("from", from.sql());
                detail.put("to", MessageStatus.CLOSED.sql());
                detail.put("deliveryRecord", record.map(rec -> rec.state().dbValue()).orElse(null));
                store.insertAudit(tx, actor, AuditActions.CLOSE, k, why, SupportJson.object(InBulk.detail(bulk, detail)));
            });
        } catch (Refused e) {
            return new ActionResult.NotAllowed(k, EmailStatus.derive(was[0].sql(), null), e.getMessage());
        }
        return result(AuditActions.CLOSE, actor, k, r, null, "only a failed email or one in review can be closed", bulk);
    }

    /** Pauses dispatching of {@code scope} ({@code *}: everything); every dispatcher stops claiming within seconds. */
    public ControlState pause(Actor actor, String scope, String reason) {
        return setPaused(actor, scope, reason, true);
    }

    /** Resumes dispatching of {@code scope}. */
    public ControlState resume(Actor actor, String scope, String reason) {
        return setPaused(actor, scope, reason, false);
    }

    private ControlState setPaused(Actor actor, String scope, String reason, boolean paused) {
        Roles.require(actor, Role.OPERATOR);
        String s = Params.scope(SupportParams.SCOPE, scope);
        String why = Params.reason(SupportParams.REASON, reason, false);
        String action = paused ? AuditActions.PAUSE : AuditActions.RESUME;
        ControlState state = db.write(tx -> {
            control.setPaused(tx, s, paused, why, actor.name());
            store.insertAudit(tx, actor, action, null, why, SupportJson.object(Map.of("scope", s)));
            return new ControlState(store.switches(tx));
        });
        log.info("Dispatching of {} {} by {} ({})", s, paused ? "paused" : "resumed", actor.name(), actor.role().word());
        return state;
    }

    /**
     * Creates the resend of {@code originalKey} in {@code tx}: locks the original's effect row and
     * the root's (so two resends of one email cannot pick the same number), copies the content from
     * the queue row, enqueues it under the next free {@code -resend-N} key, links it with
     * {@code resend_of} and writes the audit row, which names the state it was resent {@code from}
     * (the caller knows it: the original may already have been closed in this transaction).
     */
    private String createResend(DSLContext tx, Actor actor, String originalKey, String reason, String from, InBulk bulk) {
        SupportStore.ResendSource src = store.lockEffect(tx, originalKey);
        if (src == null) {
            throw new Refused("no email with key " + originalKey);
        }
        String root = rootKey(src);
        if (!root.equals(originalKey)) {
            store.lockEffect(tx, root);
        }
        io.mailroom.outbox.admin.EffectHistory.Content content = store.content(tx, src.messageId(), src.messageCreatedAt());
        if (content == null) {
            throw new Refused("the content of " + originalKey
                    + " is no longer kept (its queue row was removed by retention), so it cannot be resent");
        }
        com.fasterxml.jackson.databind.JsonNode to = SupportStore.payloadRecipient(content.payload());
        refuseErased(to == null || to.get("address") == null ? null : to.get("address").asText(), originalKey);
        String newKey = root + "-resend-" + nextResendNumber(store.keysOfAggregate(tx, src.aggregateType(), src.aggregateId()), root);
        if (newKey.length() > NewMessage.MAX_KEY_LENGTH) {
            throw new Refused("the key of a resend of " + originalKey + " would be longer than "
                    + NewMessage.MAX_KEY_LENGTH + " characters");
        }
        // the resend is found by the same searches as the email it repeats
        List<String> terms = store.terms(tx, originalKey);
        enqueuer.enqueue(tx, new NewMessage(src.topic(), src.aggregateType(), src.aggregateId(), newKey, content.orderingKey(),
                content.payload(), null, src.maxAttempts(), terms));
        store.setResendOf(tx, newKey, originalKey);
        // the resend's attachments are the same stored content, named again by hash: no bytes are copied
        io.mailroom.email.api.AttachmentStore.copyRefs(tx, originalKey, newKey);
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("newKey", newKey);
        detail.put("from", from);
        store.insertAudit(tx, actor, AuditActions.RESEND, originalKey, reason, SupportJson.object(InBulk.detail(bulk, detail)));
        return newKey;
    }

    /** An email whose recipient was erased is never sent again: its address is gone. */
    private static void refuseErased(String recipient, String key) {
        if (io.mailroom.db.sql.Redaction.isMarker(recipient)) {
            throw new Refused("the recipient of " + key + " was erased on request, so it cannot be sent again");
        }
    }

    /** The key resends are numbered under: the original's, also when resending a resend. */
    static String rootKey(SupportStore.ResendSource src) {
        if (src.resendOf() == null) {
            return src.key();
        }
        Matcher m = RESEND_SUFFIX.matcher(src.key());
        return m.matches() ? m.group(1) : src.key();
    }

    static int nextResendNumber(List<String> keys, String root) {
        Pattern p = Pattern.compile("^" + Pattern.quote(root) + "-resend-([0-9]{1,9})$");
        int max = 0;
        for (String key : keys) {
            Matcher m = p.matcher(key);
            if (m.matches()) {
                max = Math.max(max, Integer.parseInt(m.group(1)));
            }
        }
        return max + 1;
    }

    private ActionResult result(String action, Actor actor, String key, MessageActions.Result r, String newKey,
                                String allowedWhen) {
        return result(action, actor, key, r, newKey, allowedWhen, null);
    }

    /** In a bulk action the email is not read back (the run reports counts, not views). */
    private ActionResult result(String action, Actor actor, String key, MessageActions.Result r, String newKey,
                                String allowedWhen, InBulk bulk) {
        return switch (r) {
            case MessageActions.Result.Applied applied -> {
                log.info("{} on {} by {} ({}){}{}", action, key, actor.name(), actor.role().word(),
                        newKey == null ? "" : ": new email " + newKey, bulk == null ? "" : " (bulk action " + bulk.id() + ")");
                yield new ActionResult.Applied(action, bulk == null ? fresh(key) : null, newKey);
            }
            case MessageActions.Result.Busy busy -> {
                log.info("{} on {} by {}: busy (a dispatcher holds it)", action, key, actor.name());
                yield new ActionResult.Busy(key);
            }
            case MessageActions.Result.NotFound nf -> new ActionResult.NotFound(key, nf.why().contains("gone")
                    ? "email " + key + " is finished and its queue entry was removed, so it can no longer be changed"
                    : "no email with key " + key);
            case MessageActions.Result.NotAllowed na -> notAllowed(key, na.current().sql(), na.current().sql(), allowedWhen);
        };
    }

    private EmailView fresh(String key) {
        return queries.email(key).orElse(null);
    }

    private static ActionResult notFound(String key) {
        return new ActionResult.NotFound(key, "no email with key " + key);
    }

    private static ActionResult notAllowed(String key, String effectStatus, String queueStatus, String allowedWhen) {
        EmailStatus current = EmailStatus.derive(effectStatus, queueStatus);
        return new ActionResult.NotAllowed(key, current, allowedWhen + "; this one is "
                + current.words().toLowerCase(Locale.ROOT));
    }

    /** An action refused for a reason the person can act on, found inside its transaction, which rolls back. */
    /**
     * One email's step of a bulk action: the run's id (in the email's audit entry) and its filter,
     * checked again in the action's transaction, after the row lock: an email that no longer
     * matches is refused, never changed.
     */
    record InBulk(long id, java.util.function.BiPredicate<DSLContext, String> stillMatches) {

        /** Under the row lock, before the change: refused when the email no longer matches the filter. */
        static MessageActions.Precondition precondition(InBulk bulk, String key) {
            if (bulk == null) {
                return null;
            }
            return (tx, current) -> {
                if (!bulk.stillMatches().test(tx, key)) {
                    throw new Refused(ApiError.NOT_ALLOWED, "email " + key + " no longer matches the filter of bulk action "
                            + bulk.id() + " (it is " + current.sql() + ")");
                }
            };
        }

        static Map<String, ?> detail(InBulk bulk, Map<String, ?> detail) {
            if (bulk == null) {
                return detail;
            }
            Map<String, Object> out = new LinkedHashMap<>(detail);
            out.put("bulk", bulk.id());
            return out;
        }
    }

    private static final class Refused extends RuntimeException {
        final String code;

        Refused(String message) {
            this(ApiError.NOT_ALLOWED, message);
        }

        /** @param code the API's error code for it ({@link ApiError#SUPPRESSED}, else not_allowed) */
        Refused(String code, String message) {
            super(message, null, false, false);
            this.code = code;
        }
    }

    /** Runs {@code work} (one transaction taking NOWAIT locks), again a bounded number of times while it is busy. */
    private static ActionResult withBusyRetries(String key, Supplier<ActionResult> work) {
        for (int attempt = 0; ; attempt++) {
            try {
                return work.get();
            } catch (RuntimeException e) {
                if (!SqlStates.is(e, SqlStates.LOCK_NOT_AVAILABLE)) {
                    throw e;
                }
                // the transaction was rolled back before we get here
                if (attempt >= BUSY_RETRIES) {
                    return new ActionResult.Busy(key);
                }
                try {
                    Thread.sleep(BUSY_BACKOFF.toMillis() << attempt);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return new ActionResult.Busy(key);
                }
            }
        }
    }
}
