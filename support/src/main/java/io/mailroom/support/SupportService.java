package io.mailroom.support;

import io.mailroom.delivery.suppression.ErasureKey;
import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.outbox.admin.OutboxControl;
import io.mailroom.outbox.SessionSettings;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What support staff and operators can ask and do, whatever the surface (JSON API, console, CLI):
 * one entry point over the parts that hold each role: {@link SupportQueries} (an order's emails,
 * pages by status or delivery), {@link QueueStatistics} (the queue for operators), {@link TopicCharts}
 * (emails by topic over time),
 * {@link SupportActions} (retry, resend, confirm-sent, cancel, close, pause, resume), {@link ScheduleActions} (reschedule),
 * {@link SuppressionAdmin} (the suppression list), {@link SupportViews} (rows to views) and
 * {@link Roles} (who may do what). The surfaces hold this one object, so they cannot assemble the
 * parts differently (an action's answer reads the email back through the same views a page shows).
 */
public final class SupportService {

    public static final int DEFAULT_PAGE_SIZE = 50;
    public static final int MAX_PAGE_SIZE = 200;
    public static final int MAX_EMAILS_PER_ENTITY = 200;
    public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(5);

    private final SupportQueries queries;
    private final QueueStatistics statistics;
    private final TopicCharts topicCharts;
    private final SupportActions actions;
    private final ScheduleActions schedule;
    private final SuppressionAdmin suppressions;
    private final BulkActions bulk;
    private final CapturedViews captured;
    private final Erasures erasures;

    public SupportService(DataSource dataSource) {
        this(dataSource, TransportStatus.UNKNOWN);
    }

    public SupportService(DataSource dataSource, TransportStatus transports) {
        this(dataSource, transports, SessionSettings.SESSION);
    }

    /**
     * @param settings where the actions' session settings are made: {@link SessionSettings#TRANSACTION}
     *                 behind a transaction-mode pooler (reads always use {@code SET LOCAL})
     */
    public SupportService(DataSource dataSource, TransportStatus transports, SessionSettings settings) {
        this(dataSource, transports, settings, ErasureKey.stored());
    }

    /**
     * @param erasureKey the key an erased address's suppression is kept under: the dispatchers' own
     *                   ({@code MAILROOM_ERASURE_KEY}, else the one stored in the database)
     */
    public SupportService(DataSource dataSource, TransportStatus transports, SessionSettings settings, ErasureKey erasureKey) {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(transports, "transports");
        SupportTx db = new SupportTx(dataSource, DEFAULT_STATEMENT_TIMEOUT);
        SupportStore store = new SupportStore();
        SuppressionList suppressionList = new SuppressionList(
                new SuppressionConfig(SuppressionConfig.DEFAULT_SOFT_BOUNCE_LIMIT, Objects.requireNonNull(erasureKey, "erasureKey")), null);
        SupportViews views = new SupportViews(store, suppressionList);
        this.queries = new SupportQueries(db, store, views);
        this.statistics = new QueueStatistics(db, store, transports);
        this.topicCharts = new TopicCharts(db);
        this.suppressions = new SuppressionAdmin(db, suppressionList);
        this.erasures = new Erasures(db, store, suppressionList);
        MessageActions messageActions = new MessageActions(dataSource, null, MessageActions.DEFAULT_BUSY_RETRIES,
                MessageActions.DEFAULT_BUSY_BACKOFF, settings);
        this.actions = new SupportActions(db, store, queries, views, messageActions, new OutboxControl(dataSource, settings));
        this.schedule = new ScheduleActions(messageActions, store, queries, java.time.Clock.systemUTC());
        this.bulk = new BulkActions(db, store, queries, actions, suppressions);
        this.captured = new CapturedViews(dataSource, DEFAULT_STATEMENT_TIMEOUT);
    }

    // ------------------------------------------------------------------------------------- reads

    /**
     * Every email about one business entity ({@code order 102}, {@code user 42}), oldest first, each
     * with its timeline. An entity without emails has an empty list.
     */
    public AboutEmails emailsAbout(String type, String id) {
        return queries.emailsAbout(type, id);
    }

    /** The emails of an order by its number: {@link #emailsAbout} of type {@code order}. */
    public AboutEmails emailsOfOrder(String orderId) {
        return queries.emailsOfOrder(orderId);
    }

    /** The entity types emails are about, alphabetically, for autocomplete (at most 100). */
    public List<String> aboutTypes() {
        return queries.aboutTypes(100);
    }

    /** One page of a search of the whole history ({@link EmailSearch}), newest queued first. */
    public SearchPage search(EmailSearch search) {
        return queries.search(search);
    }

    /** Values for a search field's autocomplete: {@code field} recipient, domain, template or topic; at most 20. */
    public List<String> suggestions(String field, String prefix) {
        if (field == null || field.isBlank()) {
            throw new InvalidParameterException("field", "field is required: recipient, domain, template or topic");
        }
        return queries.suggestions(field.strip(), prefix, 20);
    }

    /**
     * How many emails {@code action} (retry, close, resend, lift-suppression) would apply to among
     * those matching {@code search} now: what a person confirms before {@link #startBulk}.
     */
    public BulkActions.Preview previewBulk(Actor actor, String action, EmailSearch search) {
        return bulk.preview(actor, action, search);
    }

    /** Starts a bulk action on {@code search}'s emails after {@code confirmed} was confirmed; answers the run at once. */
    public BulkRun startBulk(Actor actor, String action, EmailSearch search, int confirmed, String reason) {
        return bulk.start(actor, action, search, confirmed, reason);
    }

    /** A bulk action and its progress. */
    public Optional<BulkRun> bulkRun(long id) {
        return bulk.get(id);
    }

    /** The latest bulk actions, newest first. */
    public List<BulkRun> bulkRuns(int limit) {
        return bulk.recent(limit);
    }

    /** One email with its timeline. */
    public Optional<EmailView> email(String key) {
        return queries.email(key);
    }

    /** Mail the staging transport {@code capture} stored instead of sending. */
    public CapturedViews captured() {
        return captured;
    }

    /** The stored HTML part of an email's rendering, verbatim; serve it only sandboxed. */
    public Optional<String> renderedHtml(String key) {
        return queries.renderedHtml(key);
    }

    /** One page of emails in one status, newest change first (sent: newest queued first, see {@link EmailFilter}). */
    public EmailPage emails(EmailFilter filter) {
        return queries.emails(filter);
    }

    /** The delivery lists: {@code bounced} or {@code complained}, one page, newest report first. */
    public DeliveryPage emailsByDelivery(String delivery, String cursor, String limit) {
        return queries.emailsByDelivery(delivery, cursor, limit);
    }

    /** Delivery events that matched no email, newest first (operators). */
    public List<OrphanEvent> orphanEvents(Actor actor, String before, String limit) {
        return queries.orphanEvents(actor, before, limit);
    }

    /** The pause switches. */
    public ControlState control() {
        return queries.control();
    }

    /** Topics with emails due for over a minute that no running dispatcher serves, with how many wait on each. */
    public Map<String, Long> unservedTopics() {
        return queries.unservedTopics();
    }

    /**
     * Every dispatcher process in the registry (live or not: worker id, host, version, heartbeats,
     * claims in flight, its transports' breakers, topics served), every topic with its pause switch,
     * and the topics with emails due that no live dispatcher serves.
     */
    public DispatcherList dispatchers() {
        return queries.dispatchers();
    }

    /** The queue for operators: counts, oldest pending age, outcome windows, a 60-minute series, breaker states. */
    public QueueStats stats() {
        return statistics.stats();
    }

    /**
     * Emails by topic over {@code range} ({@code 1h}, {@code 24h}, {@code 7d}; absent: {@code 1h}) from the
     * rollups: sent, failed, bounced, waiting per bucket.
     *
     * @throws InvalidParameterException naming {@code range} for any other value
     */
    public TopicStats topicStats(String range) {
        return topicCharts.read(ChartRange.parse(SupportParams.RANGE, range));
    }

    // -------------------------------------------------------------------------------- suppressions

    /** The suppression list, newest first: active entries, or with {@code withLifted} their history too. */
    public List<SuppressionView> suppressions(String address, boolean withLifted, String before, String limit) {
        return suppressions.suppressions(address, withLifted, before, limit);
    }

    /** Suppresses an address by hand, with a reason; audited in the same transaction. */
    public SuppressionView suppress(Actor actor, String address, String reason) {
        return suppressions.suppress(actor, address, reason);
    }

    /** Lifts every active suppression of an address, with a reason; audited in the same transaction. */
    public List<SuppressionView> liftSuppression(Actor actor, String address, String reason) {
        return suppressions.liftSuppression(actor, address, reason);
    }

    /**
     * Erases an address on request (a customer's right to erasure) from the whole history, in one
     * audited transaction ({@link Erasures}); support role. Nothing stored is fine: zero counts, still audited.
     */
    public ErasureResult erase(Actor actor, String address, String reason) {
        return erasures.erase(actor, address, reason);
    }

    // ------------------------------------------------------------------------------------ actions

    /** A failed (or waiting) email is tried again now, with one more attempt allowed; not one that was resent. */
    public ActionResult retry(Actor actor, String key, String reason) {
        return actions.retry(actor, key, reason);
    }

    /** Sends a sent email, or one in review (closed in the same transaction), again under a new {@code -resend-N} key. */
    public ActionResult resend(Actor actor, String key, String reason) {
        return actions.resend(actor, key, reason);
    }

    /** An email in review is confirmed as sent; an unknown delivery record becomes succeeded. */
    public ActionResult confirmSent(Actor actor, String key, String providerMessageId, String reason) {
        return actions.confirmSent(actor, key, providerMessageId, reason);
    }

    /** A waiting email is cancelled: it will not be sent. */
    public ActionResult cancel(Actor actor, String key, String reason) {
        return actions.cancel(actor, key, reason);
    }

    /**
     * A waiting (scheduled) email is moved to {@code sendAt}: an ISO-8601 time, {@code +2h}, or {@code now};
     * at most 30 days ahead. Too late once a dispatcher has claimed it.
     */
    public ActionResult reschedule(Actor actor, String key, String sendAt, String reason) {
        return schedule.reschedule(actor, key, sendAt, reason);
    }

    /** Closes a failed email or one in review as "won't send", for good, with a reason. */
    public ActionResult close(Actor actor, String key, String reason) {
        return actions.close(actor, key, reason);
    }

    /** Pauses dispatching of {@code scope} ({@code *}: everything); every dispatcher stops claiming within seconds. */
    public ControlState pause(Actor actor, String scope, String reason) {
        return actions.pause(actor, scope, reason);
    }

    /** Resumes dispatching of {@code scope}. */
    public ControlState resume(Actor actor, String scope, String reason) {
        return actions.resume(actor, scope, reason);
    }

    static int nextResendNumber(List<String> keys, String root) {
        return SupportActions.nextResendNumber(keys, root);
    }

    static String kind(String topic) {
        return SupportViews.kind(topic);
    }
}
