package io.mailroom.support;

import io.mailroom.delivery.Addresses;
import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.delivery.suppression.SuppressionException;
import io.mailroom.delivery.suppression.SuppressionList;
import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.idempotency.EffectRecord;
import io.mailroom.idempotency.EffectState;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.AttemptDetail;
import io.mailroom.outbox.DuplicateIdempotencyKeyException;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.admin.OutboxControl;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.outbox.OutboxEnqueuer;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.Record2;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What support staff and operators can ask and do, whatever the surface (JSON API, console, CLI):
 * find the emails of an order with their timelines, list emails by status, read the queue's
 * statistics; retry, resend, confirm-sent, cancel and close (won't send) an email; pause and resume
 * dispatching.
 *
 * <p>Reads run in one read-only REPEATABLE READ transaction each, so a page shows one consistent
 * moment. Every action checks the actor's role, locks what it changes with {@code NOWAIT} (a row a
 * dispatcher holds answers {@link ActionResult.Busy} at once, never a hang; tried again a bounded
 * number of times) and writes its {@code audit_log} row in the same transaction as the change: an
 * action that is not in the audit log did not happen.
 */
public final class SupportService {

    private static final Logger log = LoggerFactory.getLogger(SupportService.class);

    public static final int DEFAULT_PAGE_SIZE = 50;
    public static final int MAX_PAGE_SIZE = 200;
    public static final int MAX_EMAILS_PER_ORDER = 200;
    public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(5);
    static final int BUSY_RETRIES = MessageActions.DEFAULT_BUSY_RETRIES;
    static final Duration BUSY_BACKOFF = MessageActions.DEFAULT_BUSY_BACKOFF;
    static final int CHART_MINUTES = 60;

    /** How the dispatcher's last error of an email stopped by a suppression begins. */
    static final String SUPPRESSED_PREFIX = "suppressed (";
    private static final Pattern RESEND_SUFFIX = Pattern.compile("^(.+)-resend-[0-9]{1,9}$");

    private final DSLContext dsl;
    private final SupportStore store = new SupportStore();
    private final MessageActions messageActions;
    private final OutboxControl control;
    private final IdempotencyStore idempotency = new IdempotencyStore();
    private final OutboxEnqueuer enqueuer = new OutboxEnqueuer();
    private final TransportStatus transports;
    private final long statementTimeoutMillis;

    public SupportService(DataSource dataSource) {
        this(dataSource, TransportStatus.UNKNOWN);
    }

    private final SuppressionList suppressionList = new SuppressionList(SuppressionConfig.defaults(), null);

    public SupportService(DataSource dataSource, TransportStatus transports) {
        this(dataSource, transports, SessionSettings.SESSION);
    }

    /**
     * @param settings where the actions' session settings are made: {@link SessionSettings#TRANSACTION}
     *                 behind a transaction-mode pooler (reads always use {@code SET LOCAL})
     */
    public SupportService(DataSource dataSource, TransportStatus transports, SessionSettings settings) {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(settings, "settings");
        this.dsl = DSL.using(dataSource, SQLDialect.POSTGRES);
        this.messageActions = new MessageActions(dataSource, null, MessageActions.DEFAULT_BUSY_RETRIES,
                MessageActions.DEFAULT_BUSY_BACKOFF, settings);
        this.control = new OutboxControl(dataSource, settings);
        this.transports = Objects.requireNonNull(transports, "transports");
        this.statementTimeoutMillis = DEFAULT_STATEMENT_TIMEOUT.toMillis();
    }

    // ------------------------------------------------------------------------------------- reads

    /** Every email of an order, oldest first, each with its timeline. An order without emails has an empty list. */
    public OrderEmails emailsOfOrder(String orderId) {
        String id = Params.orderId(SupportParams.ORDER_ID, orderId);
        return read(tx -> {
            List<SupportStore.EmailRow> rows = store.emailsOfOrder(tx, id, MAX_EMAILS_PER_ORDER + 1);
            boolean truncated = rows.size() > MAX_EMAILS_PER_ORDER;
            if (truncated) {
                rows = rows.subList(0, MAX_EMAILS_PER_ORDER);
            }
            return new OrderEmails(id, views(tx, rows, true), truncated);
        });
    }

    /** One email with its timeline. */
    public Optional<EmailView> email(String key) {
        String k = Params.key(SupportParams.KEY, key);
        return read(tx -> {
            SupportStore.EmailRow row = store.email(tx, k);
            return row == null ? Optional.<EmailView>empty() : Optional.of(views(tx, List.of(row), true).getFirst());
        });
    }

    /**
     * The stored HTML part of an email's rendering, verbatim (it is the customer's email: nothing is
     * escaped or rewritten); empty when the email has no rendering or no HTML part. Serve it only
     * sandboxed, as the preview routes do.
     */
    public Optional<String> renderedHtml(String key) {
        String k = Params.key(SupportParams.KEY, key);
        return read(tx -> Optional.ofNullable(store.renderedHtml(tx, k)));
    }

    /** One page of emails in one status, newest change first. */
    public EmailPage emails(EmailFilter filter) {
        Objects.requireNonNull(filter, "filter");
        return read(tx -> {
            List<SupportStore.EmailRow> rows = store.emailsByStatus(tx, filter, filter.limit() + 1);
            String next = null;
            if (rows.size() > filter.limit()) {
                rows = rows.subList(0, filter.limit());
                SupportStore.EmailRow last = rows.getLast();
                next = new Cursor(last.updatedAt(), last.key()).encode();
            }
            return new EmailPage(filter.status(), views(tx, rows, false), next);
        });
    }

    /** The delivery lists: {@code bounced} or {@code complained}, one page, newest report first. */
    public DeliveryPage emailsByDelivery(String delivery, String cursor, String limit) {
        String state = delivery == null ? "" : delivery.strip().toLowerCase(java.util.Locale.ROOT);
        if (!state.equals("bounced") && !state.equals("complained")) {
            throw new InvalidParameterException(SupportParams.DELIVERY, "delivery must be bounced or complained");
        }
        int n = Params.limit(SupportParams.LIMIT, limit);
        Cursor from = Params.cursor(SupportParams.CURSOR, cursor);
        return read(tx -> {
            List<SupportStore.EmailRow> rows = store.emailsByDelivery(tx, state, from, n + 1);
            String next = null;
            if (rows.size() > n) {
                rows = rows.subList(0, n);
                SupportStore.EmailRow last = rows.getLast();
                next = new Cursor(last.deliveryUpdatedAt(), last.key()).encode();
            }
            return new DeliveryPage(state, views(tx, rows, false), next);
        });
    }

    /** Delivery events that matched no email, newest first (operators). */
    public List<OrphanEvent> orphanEvents(Actor actor, String before, String limit) {
        requireRole(actor, Role.OPERATOR);
        Long beforeId = Params.optionalId(SupportParams.BEFORE, before);
        int n = Params.limit(SupportParams.LIMIT, limit);
        return read(tx -> store.orphanEvents(tx, beforeId, n).stream()
                .map(e -> new OrphanEvent(e.id(), e.source(), e.deliveryId(), e.receivedAt(), e.occurredAt(), e.kind(),
                        e.bounceType(), e.providerEvent(), e.providerMessageId(), e.recipient(), e.diagnosticCode()))
                .toList());
    }

    /** The suppression list, newest first: active entries, or with {@code withLifted} their history too. */
    public List<SuppressionView> suppressions(String address, boolean withLifted, String before, String limit) {
        Long beforeId = Params.optionalId(SupportParams.BEFORE, before);
        int n = Params.limit(SupportParams.LIMIT, limit);
        return read(tx -> suppressionCall(() -> suppressionList.list(tx, blankToNull(address), withLifted, beforeId, n)))
                .stream().map(SuppressionView::of).toList();
    }

    /** Suppresses an address by hand, with a reason; audited in the same transaction. */
    public SuppressionView suppress(Actor actor, String address, String reason) {
        requireRole(actor, Role.SUPPORT);
        SuppressionView added = write(tx -> SuppressionView.of(suppressionCall(
                () -> suppressionList.add(tx, address, reason, actor.name(), actor.role().word()))));
        log.info("{} suppressed by {} ({})", Addresses.masked(added.address()), actor.name(), actor.role().word());
        return added;
    }

    /** Lifts every active suppression of an address, with a reason; audited in the same transaction. */
    public List<SuppressionView> liftSuppression(Actor actor, String address, String reason) {
        requireRole(actor, Role.SUPPORT);
        return write(tx -> suppressionCall(() -> suppressionList.lift(tx, address, reason, actor.name(), actor.role().word())))
                .stream().map(SuppressionView::of).toList();
    }

    /** The list's refusals as the support surfaces answer them: 400 naming the field, or 409. */
    private static <T> T suppressionCall(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (SuppressionException e) {
            if (e.conflict()) {
                throw new HttpFailure(409, "conflict", e.getMessage(), e.field());
            }
            throw new InvalidParameterException(e.field(), e.getMessage());
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    /** The pause switches. */
    public ControlState control() {
        return read(tx -> new ControlState(store.switches(tx)));
    }

    /**
     * Topics with emails due for over a minute that no running dispatcher serves, with how many
     * wait on each: nothing will send them until a dispatcher serving the topic starts.
     */
    public Map<String, Long> unservedTopics() {
        return read(io.mailroom.outbox.runtime.DispatcherRegistry::unservedTopics);
    }

    /**
     * The queue for operators: counts, oldest pending age, outcomes in the last minute and hour, a
     * 60-minute series and the breaker states. The pending depth of past minutes is reconstructed
     * backwards from the depth now: minus the emails created since, plus those that finished
     * (sent, failed, review, cancelled), minus failed ones put back by a retry.
     */
    public QueueStats stats() {
        return read(tx -> {
            SupportStore.QueueCounts q = store.queueCounts(tx);
            Map<String, Long> attention = store.attentionCounts(tx);
            Instant now = q.now();
            Instant first = now.truncatedTo(ChronoUnit.MINUTES).minus(CHART_MINUTES - 1, ChronoUnit.MINUTES);

            long[] sent = new long[CHART_MINUTES];
            long[] failed = new long[CHART_MINUTES];
            long[] finished = new long[CHART_MINUTES];
            long[] created = new long[CHART_MINUTES];
            long[] reopened = new long[CHART_MINUTES];
            for (SupportStore.Bucket b : store.attemptsPerMinute(tx, first)) {
                int i = index(first, b.minute());
                if (i < 0) {
                    continue;
                }
                switch (b.what()) {
                    case "done" -> {
                        sent[i] += b.count();
                        finished[i] += b.count();
                    }
                    case "failed", "review" -> {
                        failed[i] += b.count();
                        finished[i] += b.count();
                    }
                    case "retry" -> failed[i] += b.count();
                    default -> {
                        // lease_expired, released, claim_lost: the email stays in the queue
                    }
                }
            }
            for (SupportStore.Bucket b : store.createdPerMinute(tx, first)) {
                int i = index(first, b.minute());
                if (i >= 0) {
                    created[i] += b.count();
                }
            }
            for (SupportStore.Bucket b : store.queueActionsPerMinute(tx, first)) {
                int i = index(first, b.minute());
                if (i >= 0) {
                    if (b.what().equals(AuditActions.CANCEL)) {
                        finished[i] += b.count();
                    } else {
                        reopened[i] += b.count();
                    }
                }
            }
            long depthNow = q.pending() + q.running();
            long[] depth = new long[CHART_MINUTES];
            depth[CHART_MINUTES - 1] = depthNow;
            for (int i = CHART_MINUTES - 1; i > 0; i--) {
                depth[i - 1] = depth[i] - created[i] + finished[i] - reopened[i];
            }
            List<QueueStats.Minute> minutes = new ArrayList<>(CHART_MINUTES);
            for (int i = 0; i < CHART_MINUTES; i++) {
                minutes.add(new QueueStats.Minute(first.plus(i, ChronoUnit.MINUTES), Math.max(0, depth[i]), sent[i], failed[i]));
            }

            Map<String, long[]> windows = new HashMap<>();
            for (SupportStore.OutcomeCount c : store.outcomeWindows(tx)) {
                windows.put(c.outcome(), new long[]{c.lastMinute(), c.lastHour()});
            }
            QueueStats.Window lastMinute = window(windows, 0);
            QueueStats.Window lastHour = window(windows, 1);

            Map<String, Long> counts = new LinkedHashMap<>();
            counts.put(EmailStatus.PENDING.code(), q.pending());
            counts.put(EmailStatus.SENDING.code(), q.running());
            counts.put(EmailStatus.FAILED.code(), attention.get("failed"));
            counts.put(EmailStatus.REVIEW.code(), attention.get("review"));
            Long age = q.oldestPending() == null ? null : Math.max(0, Duration.between(q.oldestPending(), now).toSeconds());
            List<String> paused = new ControlState(store.switches(tx)).pausedScopes();
            return new QueueStats(now, counts, q.pendingDue(), q.oldestPending(), age, lastMinute, lastHour, minutes,
                    paused, safeTransports(), transports.known());
        });
    }

    private static int index(Instant first, Instant minute) {
        long i = ChronoUnit.MINUTES.between(first, minute);
        return i < 0 || i >= CHART_MINUTES ? -1 : (int) i;
    }

    private static QueueStats.Window window(Map<String, long[]> w, int which) {
        return new QueueStats.Window(get(w, "done", which), get(w, "failed", which), get(w, "retry", which),
                get(w, "review", which));
    }

    private static long get(Map<String, long[]> w, String outcome, int which) {
        long[] v = w.get(outcome);
        return v == null ? 0 : v[which];
    }

    private List<TransportStatus.TransportState> safeTransports() {
        try {
            return transports.transports();
        } catch (RuntimeException e) {
            log.warn("Transport status could not be read; showing it as unknown", e);
            return List.of();
        }
    }

    // ----------------------------------------------------------------------------------- actions

    /**
     * A failed (or waiting) email is tried again now, with one more attempt allowed. Not one that was
     * resent: its resend is its second chance, and retrying it would send the email twice. That is
     * checked after the row lock, so a resend committed first is seen (it holds the same lock).
     */
    public ActionResult retry(Actor actor, String key, String reason) {
        requireRole(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String why = Params.reason(SupportParams.REASON, reason, false);
        // The status before, for the audit row (the queue chart counts failed emails put back).
        String before = read(tx -> store.effectStatus(tx, k));
        if (before == null) {
            return notFound(k);
        }
        MessageActions.Result r;
        try {
            r = messageActions.retryNow(k, tx -> {
                List<String> resends = store.resendKeys(tx, k);
                if (!resends.isEmpty()) {
                    throw new Refused("email " + k + " was resent as " + String.join(", ", resends)
                            + ", so retrying it would send it twice; close it instead");
                }
                // read under the row lock: a lift committed before it is seen, one after it comes too late for this retry
                SupportStore.EmailRow row = store.email(tx, k);
                SuppressionNote suppression = row == null ? null : suppressionsOf(tx, List.of(row)).get(k);
                if (suppression != null && suppression.blocksRetry()) {
                    throw new Refused(ApiError.SUPPRESSED, suppression.retryRefusal(k));
                }
                store.insertAudit(tx, actor, AuditActions.RETRY, k, why, SupportJson.object(Map.of("from", before)));
            });
        } catch (Refused e) {
            return new ActionResult.NotAllowed(k, EmailStatus.derive(before, null), e.getMessage(), e.code);
        }
        return result(AuditActions.RETRY, actor, k, r, null, "only a failed or waiting email can be retried");
    }

    /**
     * Sends an email again as a new business effect, with a new key ({@code email-order-102-resend-1})
     * and the same content: a sent email, or one in review (which is then closed as failed in the
     * same transaction, so it can never go out later as well). The reason is required.
     */
    public ActionResult resend(Actor actor, String key, String reason) {
        requireRole(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String why = Params.reason(SupportParams.REASON, reason, true);
        String status = read(tx -> store.effectStatus(tx, k));
        if (status == null) {
            return notFound(k);
        }
        try {
            if (status.equals("review")) {
                String[] newKey = new String[1];
                // closeReview applies only to a message in review, so that is the state it is resent from
                MessageActions.Result r = messageActions.closeReview(k, tx -> newKey[0] = createResend(tx, actor, k, why,
                        MessageStatus.REVIEW.sql()));
                return result(AuditActions.RESEND, actor, k, r, newKey[0], "only a sent email or one in review can be resent");
            }
            if (status.equals("done")) {
                ActionResult r = withBusyRetries(k, () -> write(tx -> {
                    SupportStore.ResendSource src = store.lockEffect(tx, k);
                    if (src == null) {
                        return notFound(k);
                    }
                    if (!src.status().equals("done")) {
                        return notAllowed(k, src.status(), null, "only a sent email or one in review can be resent");
                    }
                    return new ActionResult.Applied(AuditActions.RESEND, null, createResend(tx, actor, k, why, src.status()));
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
        requireRole(actor, Role.SUPPORT);
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
        requireRole(actor, Role.SUPPORT);
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
        requireRole(actor, Role.SUPPORT);
        String k = Params.key(SupportParams.KEY, key);
        String why = Params.reason(SupportParams.REASON, reason, true);
        MessageStatus[] was = new MessageStatus[1];
        MessageActions.Result r;
        try {
            r = messageActions.close(k, (tx, from) -> {
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
                store.insertAudit(tx, actor, AuditActions.CLOSE, k, why, SupportJson.object(detail));
            });
        } catch (Refused e) {
            return new ActionResult.NotAllowed(k, EmailStatus.derive(was[0].sql(), null), e.getMessage());
        }
        return result(AuditActions.CLOSE, actor, k, r, null, "only a failed email or one in review can be closed");
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
        requireRole(actor, Role.OPERATOR);
        String s = Params.scope(SupportParams.SCOPE, scope);
        String why = Params.reason(SupportParams.REASON, reason, false);
        String action = paused ? AuditActions.PAUSE : AuditActions.RESUME;
        ControlState state = write(tx -> {
            control.setPaused(tx, s, paused, why, actor.name());
            store.insertAudit(tx, actor, action, null, why, SupportJson.object(Map.of("scope", s)));
            return new ControlState(store.switches(tx));
        });
        log.info("Dispatching of {} {} by {} ({})", s, paused ? "paused" : "resumed", actor.name(), actor.role().word());
        return state;
    }

    // ---------------------------------------------------------------------------- action helpers

    private static void requireRole(Actor actor, Role required) {
        Objects.requireNonNull(actor, "actor");
        if (!actor.role().includes(required)) {
            throw new AccessDeniedException(actor, required);
        }
    }

    /**
     * Creates the resend of {@code originalKey} in {@code tx}: locks the original's effect row and
     * the root's (so two resends of one email cannot pick the same number), copies the content from
     * the queue row, enqueues it under the next free {@code -resend-N} key, links it with
     * {@code resend_of} and writes the audit row, which names the state it was resent {@code from}
     * (the caller knows it: the original may already have been closed in this transaction).
     */
    private String createResend(DSLContext tx, Actor actor, String originalKey, String reason, String from) {
        SupportStore.ResendSource src = store.lockEffect(tx, originalKey);
        if (src == null) {
            throw new Refused("no email with key " + originalKey);
        }
        String root = rootKey(src);
        if (!root.equals(originalKey)) {
            store.lockEffect(tx, root);
        }
        Record2<JSONB, String> content = store.content(tx, src.messageId(), src.messageCreatedAt());
        if (content == null || content.value1() == null) {
            throw new Refused("the content of " + originalKey
                    + " is no longer kept (its queue row was removed by retention), so it cannot be resent");
        }
        String newKey = root + "-resend-" + nextResendNumber(store.keysOfAggregate(tx, src.aggregateType(), src.aggregateId()), root);
        if (newKey.length() > NewMessage.MAX_KEY_LENGTH) {
            throw new Refused("the key of a resend of " + originalKey + " would be longer than "
                    + NewMessage.MAX_KEY_LENGTH + " characters");
        }
        enqueuer.enqueue(tx, new NewMessage(src.topic(), src.aggregateType(), src.aggregateId(), newKey, content.value2(),
                content.value1().data(), null, src.maxAttempts()));
        store.setResendOf(tx, newKey, originalKey);
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("newKey", newKey);
        detail.put("from", from);
        store.insertAudit(tx, actor, AuditActions.RESEND, originalKey, reason, SupportJson.object(detail));
        return newKey;
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
        return switch (r) {
            case MessageActions.Result.Applied applied -> {
                log.info("{} on {} by {} ({}){}", action, key, actor.name(), actor.role().word(),
                        newKey == null ? "" : ": new email " + newKey);
                yield new ActionResult.Applied(action, fresh(key), newKey);
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
        return email(key).orElse(null);
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

    // ------------------------------------------------------------------------------------ views

    private List<EmailView> views(DSLContext tx, List<SupportStore.EmailRow> rows, boolean withTimeline) {
        if (rows.isEmpty()) {
            return List.of();
        }
        List<String> keys = rows.stream().map(SupportStore.EmailRow::key).toList();
        Map<String, List<String>> resentAs = new HashMap<>();
        for (Record2<String, String> r : store.resendsOf(tx, rows)) {
            resentAs.computeIfAbsent(r.value2(), k -> new ArrayList<>()).add(r.value1());
        }
        Map<String, List<SupportStore.AttemptRow>> attempts = new HashMap<>();
        for (SupportStore.AttemptRow a : store.attempts(tx, keys)) {
            attempts.computeIfAbsent(a.key(), k -> new ArrayList<>()).add(a);
        }
        Map<String, Boolean> permanent = new HashMap<>();
        attempts.forEach((k, list) -> permanent.put(k, failedPermanently(list.getLast())));
        Map<String, List<SupportStore.AuditRow>> audit = new HashMap<>();
        Map<String, Rendering> renderings = new HashMap<>();
        Map<String, List<SupportStore.DeliveryEventRow>> events = new HashMap<>();
        if (withTimeline) {
            for (SupportStore.DeliveryEventRow e : store.deliveryEvents(tx, keys)) {
                events.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
            }
            for (SupportStore.RenderingRow g : store.renderings(tx, keys)) {
                renderings.put(g.key(), new Rendering(g.template(), g.version(), g.locale(), g.subject(), g.text(),
                        g.hasHtml(), g.renderedAt(), g.attempt(), g.hasHtml() ? ApiRoutes.previewPath(g.key()) : null));
            }
            Set<String> auditKeys = new LinkedHashSet<>(keys);
            rows.stream().map(SupportStore.EmailRow::resendOf).filter(Objects::nonNull).forEach(auditKeys::add);
            for (SupportStore.AuditRow a : store.audit(tx, auditKeys)) {
                audit.computeIfAbsent(a.key(), k -> new ArrayList<>()).add(a);
            }
        }
        Map<String, SuppressionNote> suppressed = suppressionsOf(tx, rows);
        List<EmailView> out = new ArrayList<>(rows.size());
        for (SupportStore.EmailRow row : rows) {
            List<TimelineEntry.Attempt> tries = attempts.getOrDefault(row.key(), List.of()).stream()
                    .map(SupportService::attempt).toList();
            List<TimelineEntry> timeline = null;
            if (withTimeline) {
                timeline = new ArrayList<>(tries);
                for (SupportStore.AuditRow a : audit.getOrDefault(row.key(), List.of())) {
                    timeline.add(new TimelineEntry.Action(a.at(), a.actor(), a.role(), a.action(), a.reason(),
                            SupportJson.text(SupportJson.tree(a.detailJson()), "newKey")));
                }
                if (row.resendOf() != null) {
                    for (SupportStore.AuditRow a : audit.getOrDefault(row.resendOf(), List.of())) {
                        String created = SupportJson.text(SupportJson.tree(a.detailJson()), "newKey");
                        if (a.action().equals(AuditActions.RESEND) && row.key().equals(created)) {
                            timeline.add(new TimelineEntry.Action(a.at(), a.actor(), a.role(), AuditActions.RESEND_CREATED,
                                    a.reason(), null));
                        }
                    }
                }
                for (SupportStore.DeliveryEventRow e : events.getOrDefault(row.key(), List.of())) {
                    timeline.add(new TimelineEntry.Delivery(e.occurredAt() != null ? e.occurredAt() : e.receivedAt(),
                            e.receivedAt(), e.source(), e.kind(), e.bounceType(), e.providerEvent(), e.diagnosticCode(),
                            e.description(), e.applied()));
                }
                timeline.sort(Comparator.comparing(TimelineEntry::at));
            }
            out.add(view(row, tries, resentAs.getOrDefault(row.key(), List.of()), permanent.getOrDefault(row.key(), false), timeline,
                    renderings.get(row.key()), suppressed.get(row.key())));
        }
        return out;
    }

    /** The suppression in force for each row's recipient, by key, in one query for the page; rows without one are absent. */
    private Map<String, SuppressionNote> suppressionsOf(DSLContext tx, List<SupportStore.EmailRow> rows) {
        Map<String, String> addressOf = new HashMap<>();
        for (SupportStore.EmailRow row : rows) {
            String address = normalizedRecipient(row);
            if (address != null) {
                addressOf.put(row.key(), address);
            }
        }
        Map<String, List<io.mailroom.delivery.suppression.Suppression>> active = suppressionList.active(tx, addressOf.values());
        Map<String, SuppressionNote> out = new HashMap<>();
        for (SupportStore.EmailRow row : rows) {
            List<io.mailroom.delivery.suppression.Suppression> entries = active.get(addressOf.get(row.key()));
            if (entries != null) {
                SuppressionNote.of(entries, stoppedBySuppression(row)).ifPresent(n -> out.put(row.key(), n));
            }
        }
        return out;
    }

    /** The recipient as the suppression list stores addresses, or null when it is not known (or not an address). */
    private static String normalizedRecipient(SupportStore.EmailRow row) {
        String recipient = firstNonNull(row.descriptorRecipient(), row.payloadEmail());
        if (recipient == null) {
            return null;
        }
        try {
            return Addresses.normalize(recipient);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether the email's last error is the dispatcher's "suppressed (...)" ({@code Suppression#failureReason}). */
    private static boolean stoppedBySuppression(SupportStore.EmailRow row) {
        String error = row.queueStatus() != null ? row.queueLastError() : row.effectLastError();
        return error != null && error.startsWith(SUPPRESSED_PREFIX);
    }

    private static TimelineEntry.Attempt attempt(SupportStore.AttemptRow a) {
        JsonNode detail = SupportJson.tree(a.detailJson());
        String providerStatus = firstNonNull(SupportJson.text(detail, "status"), SupportJson.text(detail, "replyCode"),
                SupportJson.text(detail, "code"));
        String providerId = firstNonNull(SupportJson.text(detail, "providerMessageId"), SupportJson.text(detail, "messageId"));
        return new TimelineEntry.Attempt(a.attempt(), a.startedAt(), a.finishedAt(), a.outcome(), a.worker(), a.error(),
                SupportJson.text(detail, "transport"), providerStatus, providerId, SupportJson.text(detail, "reply"),
                a.outcome().equals("released") ? SupportJson.text(detail, AttemptDetail.RELEASE) : null);
    }

    /**
     * Whether this attempt ended the email with a permanent failure: the handler said so (a 5xx
     * refusal, an email that cannot be rendered), as the dispatcher records it in the detail. A
     * failure because the tries ran out on transient errors is not permanent: trying later may work.
     */
    private static boolean failedPermanently(SupportStore.AttemptRow a) {
        return a.outcome().equals("failed")
                && "true".equals(SupportJson.text(SupportJson.tree(a.detailJson()), AttemptDetail.PERMANENT));
    }

    private static EmailView view(SupportStore.EmailRow row, List<TimelineEntry.Attempt> attempts, List<String> resentAs,
                                  boolean failedPermanently, List<TimelineEntry> timeline, Rendering rendering,
                                  SuppressionNote suppression) {
        EmailStatus status = EmailStatus.derive(row.effectStatus(), row.queueStatus());
        boolean contentKept = row.queueStatus() != null;
        String providerId = row.resultRef();
        if (providerId == null) {
            providerId = attempts.stream().filter(a -> a.outcome().equals("done")).map(TimelineEntry.Attempt::providerMessageId)
                    .filter(Objects::nonNull).reduce((a, b) -> b).orElse(null);
        }
        String providerReply = attempts.stream().filter(a -> a.outcome().equals("done")).map(TimelineEntry.Attempt::providerReply)
                .filter(Objects::nonNull).reduce((a, b) -> b).orElse(null);
        Instant sentAt = null;
        String lastError = contentKept ? row.queueLastError() : row.effectLastError();
        if (status == EmailStatus.SENT) {
            sentAt = "succeeded".equals(row.recordState()) && row.completedAt() != null ? row.completedAt() : row.finishedAt();
            // the queue keeps the last error through a success; it belongs to an earlier attempt (in the timeline)
            lastError = null;
        }
        List<String> actions = EmailView.actionsFor(status, new EmailView.Facts(contentKept, !resentAs.isEmpty(),
                failedPermanently, "succeeded".equals(row.recordState()), suppression != null && suppression.blocksRetry()));
        return new EmailView(row.key(), row.topic(), kind(row.topic()), row.aggregateType(), row.aggregateId(),
                firstNonNull(row.descriptorRecipient(), row.payloadEmail()),
                firstNonNull(row.descriptorName(), row.payloadName()),
                row.descriptorSubject(), status,
                row.queueAttempts() != null ? row.queueAttempts() : row.effectAttempts(),
                row.queueMaxAttempts() != null ? row.queueMaxAttempts() : row.effectMaxAttempts(),
                lastError, row.createdAt(), row.updatedAt(), sentAt,
                status == EmailStatus.PENDING ? row.availableAt() : null,
                providerId, status == EmailStatus.SENT ? providerReply : null, row.recordState(), contentKept,
                row.resendOf(), resentAs, actions, EmailView.mainActionOf(status, actions), timeline, rendering,
                row.deliveryState() == null ? null : new Delivery(row.deliveryState(), row.deliveryDetail(), row.deliveryUpdatedAt()),
                suppression);
    }

    /** The topic in words: {@code email.order_confirmation} → "Order confirmation". */
    static String kind(String topic) {
        String t = topic.startsWith(SupportStore.EMAIL_TOPIC_PREFIX) ? topic.substring(SupportStore.EMAIL_TOPIC_PREFIX.length()) : topic;
        t = t.replace('_', ' ').replace('.', ' ').trim();
        if (t.isEmpty()) {
            return topic;
        }
        return Character.toUpperCase(t.charAt(0)) + t.substring(1);
    }

    @SafeVarargs
    private static <T> T firstNonNull(T... values) {
        for (T v : values) {
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    // ----------------------------------------------------------------------------- transactions

    private <T> T read(Function<DSLContext, T> work) {
        return dsl.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
            tx.execute("SET LOCAL statement_timeout = " + statementTimeoutMillis);
            return work.apply(tx);
        });
    }

    private <T> T write(Function<DSLContext, T> work) {
        return dsl.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            tx.execute("SET LOCAL statement_timeout = " + statementTimeoutMillis);
            return work.apply(tx);
        });
    }
}
