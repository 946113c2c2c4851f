package io.mailroom.support;

import org.jooq.DSLContext;

import io.mailroom.outbox.admin.Dispatchers;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What support can look up: an order's emails, one email, a page by status or delivery state, the
 * orphan delivery events, the pause switches, the running dispatchers and the topics none serves. Each answer is read
 * in one read-only REPEATABLE READ transaction, so a page shows one consistent moment; parameters are
 * checked before any query, with errors naming the parameter.
 */
final class SupportQueries {

    static final int MAX_EMAILS_PER_ENTITY = SupportService.MAX_EMAILS_PER_ENTITY;

    private final SupportTx db;
    private final SupportStore store;
    private final SupportViews views;

    SupportQueries(SupportTx db, SupportStore store, SupportViews views) {
        this.db = db;
        this.store = store;
        this.views = views;
    }

    /**
     * Every email about one business entity, oldest first, each with its timeline. An entity without
     * emails has an empty list.
     */
    public AboutEmails emailsAbout(String type, String id) {
        About about = new About(Params.aboutType(SupportParams.ABOUT_TYPE, type), Params.aboutId(SupportParams.ABOUT_ID, id));
        return db.read(tx -> {
            List<SupportStore.EmailRow> rows = store.emailsAbout(tx, about, MAX_EMAILS_PER_ENTITY + 1);
            boolean truncated = rows.size() > MAX_EMAILS_PER_ENTITY;
            if (truncated) {
                rows = rows.subList(0, MAX_EMAILS_PER_ENTITY);
            }
            return new AboutEmails(about, views.views(tx, rows, true), truncated);
        });
    }

    /** The emails of an order by its number ({@code orderId} must be one): {@link #emailsAbout} of type order. */
    public AboutEmails emailsOfOrder(String orderId) {
        return emailsAbout(SupportStore.ORDER, Params.orderId(SupportParams.ORDER_ID, orderId));
    }

    /** The entity types emails are about, alphabetically (for autocomplete), at most {@code limit}. */
    public List<String> aboutTypes(int limit) {
        return db.read(tx -> store.aboutTypes(tx, limit));
    }

    /** One email with its timeline. */
    public Optional<EmailView> email(String key) {
        String k = Params.key(SupportParams.KEY, key);
        return db.read(tx -> {
            SupportStore.EmailRow row = store.email(tx, k);
            return row == null ? Optional.<EmailView>empty() : Optional.of(views.views(tx, List.of(row), true).getFirst());
        });
    }

    /**
     * The stored HTML part of an email's rendering, verbatim (it is the customer's email: nothing is
     * escaped or rewritten); empty when the email has no rendering or no HTML part. Serve it only
     * sandboxed, as the preview routes do.
     */
    public Optional<String> renderedHtml(String key) {
        String k = Params.key(SupportParams.KEY, key);
        return db.read(tx -> Optional.ofNullable(store.renderedHtml(tx, k)));
    }

    /** One page of emails in one status, newest first ({@link EmailFilter}: by change, sent ones by queue time). */
    public EmailPage emails(EmailFilter filter) {
        Objects.requireNonNull(filter, "filter");
        return db.read(tx -> {
            List<SupportStore.EmailRow> rows = store.emailsByStatus(tx, filter, filter.limit() + 1);
            String next = null;
            if (rows.size() > filter.limit()) {
                rows = rows.subList(0, filter.limit());
                SupportStore.EmailRow last = rows.getLast();
                next = new Cursor(SupportStore.pageTime(filter, last), last.key()).encode();
            }
            return new EmailPage(filter.status(), views.views(tx, rows, false), next);
        });
    }

    /** How many emails a search reads at most for one page when it filters by what outbox-core does not hold. */
    static final int SEARCH_READ_BUDGET = 2_000;
    /** How long a bulk action's count may take (a page's statements get the support default, 5 s). */
    static final java.time.Duration COUNT_TIMEOUT = java.time.Duration.ofSeconds(60);

    /**
     * One page of a search, newest queued first. Outbox-core's search applies every filter it holds
     * (terms, status, topic, entity, key, error words, time); the delivery state (delivery-events')
     * and "sending now" are applied here to the rows it returns, reading further pages until this one
     * is full or {@link #SEARCH_READ_BUDGET} emails were read.
     */
    public SearchPage search(EmailSearch search) {
        Objects.requireNonNull(search, "search");
        return db.read(tx -> {
            List<String> keys = search.providerMessageId() == null ? null
                    : store.keysOfProviderId(tx, search.providerMessageId());
            List<SupportStore.EmailRow> found = new java.util.ArrayList<>();
            boolean filtersHere = filtersHere(search);
            Cursor at = search.cursor();
            int read = 0;
            String next = null;
            reading:
            while (true) {
                int batch = filtersHere ? Math.min(SEARCH_READ_BUDGET, Math.max(200, search.limit() * 4))
                        : search.limit() + 1 - found.size();
                List<SupportStore.EmailRow> rows = store.search(tx, SupportStore.criteria(search.from(at), keys, batch));
                for (SupportStore.EmailRow row : rows) {
                    if (found.size() == search.limit()) {
                        next = at.encode(); // a row beyond a full page: there is more
                        break reading;
                    }
                    at = new Cursor(row.createdAt(), row.key());
                    read++;
                    if (matches(search, row, views)) {
                        found.add(row);
                    }
                }
                if (rows.size() < batch) {
                    break; // nothing more matches outbox-core's part of the search
                }
                if (read >= SEARCH_READ_BUDGET) {
                    next = at.encode(); // read enough for one request: the next page continues here
                    break;
                }
            }
            return new SearchPage(search.parameters(), views.views(tx, found, false), next);
        });
    }

    /** Whether {@code key} matches {@code search} now, read in the caller's transaction (a bulk action's re-check). */
    boolean matches(DSLContext tx, EmailSearch search, String key) {
        if (search.key() != null && !search.key().equals(key)) {
            return false;
        }
        List<String> keys = search.providerMessageId() == null ? null : store.keysOfProviderId(tx, search.providerMessageId());
        List<SupportStore.EmailRow> rows = store.search(tx, SupportStore.criteria(search.only(key), keys, 1));
        return !rows.isEmpty() && matches(search, rows.getFirst(), views);
    }

    /**
     * How many emails match {@code search} now: one count query when outbox-core holds every filter;
     * else the matches counted page by page, up to {@code cap} (then {@code cap + 1} is answered).
     */
    long count(EmailSearch search, int cap) {
        if (!filtersHere(search)) {
            // a person waits for this count before confirming: 7 s for 50,000 of 10 M emails (BENCHMARKS.md, issue 26)
            return db.read(tx -> {
                List<String> keys = search.providerMessageId() == null ? null
                        : store.keysOfProviderId(tx, search.providerMessageId());
                return io.mailroom.outbox.admin.EffectSearch.count(tx, SupportStore.criteria(search.page(null, 1), keys, 1));
            }, COUNT_TIMEOUT);
        }
        long n = 0;
        EmailSearch page = search.page(null, SupportService.MAX_PAGE_SIZE);
        while (n <= cap) {
            SearchPage p = search(page);
            n += p.emails().size();
            if (p.nextCursor() == null) {
                break;
            }
            page = page.from(Cursor.decode(SupportParams.CURSOR, p.nextCursor()));
        }
        return Math.min(n, cap + 1L);
    }

    /** Whether {@code search} has a filter outbox-core does not hold (outbox-core stores sending and scheduled as pending). */
    private static boolean filtersHere(EmailSearch search) {
        return search.delivery() != null || search.status() == EmailStatus.PENDING || search.status() == EmailStatus.SENDING
                || search.status() == EmailStatus.SCHEDULED;
    }

    /** The filters outbox-core does not hold: delivery state, and sending now versus scheduled versus waiting. */
    private static boolean matches(EmailSearch search, SupportStore.EmailRow row, SupportViews views) {
        if (search.delivery() != null && !search.delivery().equals(row.deliveryState())) {
            return false;
        }
        if (search.status() == EmailStatus.PENDING || search.status() == EmailStatus.SENDING
                || search.status() == EmailStatus.SCHEDULED) {
            return views.status(row) == search.status();
        }
        return true;
    }

    /** Autocomplete of a search field: values of {@code field} (recipient, domain, template, topic) starting with {@code prefix}. */
    public List<String> suggestions(String field, String prefix, int limit) {
        String p = prefix == null ? "" : prefix.strip().toLowerCase(java.util.Locale.ROOT);
        if (p.length() > 200 || p.chars().anyMatch(Character::isISOControl)) {
            throw new InvalidParameterException("prefix", "prefix must be at most 200 characters without control characters");
        }
        return db.read(tx -> switch (field) {
            case SupportParams.TOPIC -> store.topics(tx, 500).stream().filter(t -> t.startsWith(p)).limit(limit).toList();
            case SupportParams.RECIPIENT -> store.termValues(tx, io.mailroom.email.api.SearchTerms.TO, p, limit);
            case SupportParams.DOMAIN -> store.termValues(tx, io.mailroom.email.api.SearchTerms.DOMAIN, p, limit);
            case SupportParams.TEMPLATE -> store.termValues(tx, io.mailroom.email.api.SearchTerms.TEMPLATE, p, limit);
            default -> throw new InvalidParameterException("field", "field must be one of recipient, domain, template, topic");
        });
    }

    /** The delivery lists: {@code bounced} or {@code complained}, one page, newest report first. */
    public DeliveryPage emailsByDelivery(String delivery, String cursor, String limit) {
        String state = delivery == null ? "" : delivery.strip().toLowerCase(Locale.ROOT);
        if (!state.equals("bounced") && !state.equals("complained")) {
            throw new InvalidParameterException(SupportParams.DELIVERY, "delivery must be bounced or complained");
        }
        int n = Params.limit(SupportParams.LIMIT, limit);
        Cursor from = Params.cursor(SupportParams.CURSOR, cursor);
        return db.read(tx -> {
            List<SupportStore.EmailRow> rows = store.emailsByDelivery(tx, state, from, n + 1);
            String next = null;
            if (rows.size() > n) {
                rows = rows.subList(0, n);
                SupportStore.EmailRow last = rows.getLast();
                next = new Cursor(last.deliveryUpdatedAt(), last.key()).encode();
            }
            return new DeliveryPage(state, views.views(tx, rows, false), next);
        });
    }

    /** Delivery events that matched no email, newest first (operators). */
    public List<OrphanEvent> orphanEvents(Actor actor, String before, String limit) {
        Roles.require(actor, Role.OPERATOR);
        Long beforeId = Params.optionalId(SupportParams.BEFORE, before);
        int n = Params.limit(SupportParams.LIMIT, limit);
        return db.read(tx -> store.orphanEvents(tx, beforeId, n).stream()
                .map(e -> new OrphanEvent(e.id(), e.source(), e.deliveryId(), e.receivedAt(), e.occurredAt(), e.kind(),
                        e.bounceType(), e.providerEvent(), e.providerMessageId(), e.recipient(), e.diagnosticCode()))
                .toList());
    }

    /** The pause switches. */
    public ControlState control() {
        return db.read(tx -> new ControlState(store.switches(tx)));
    }

    /**
     * Topics with emails due for over a minute that no running dispatcher serves, with how many
     * wait on each: nothing will send them until a dispatcher serving the topic starts.
     */
    public Map<String, Long> unservedTopics() {
        return db.read(Dispatchers::unservedTopics);
    }

    /** The dispatchers in the registry, the topics, and the switches pausing them, at one moment. */
    public DispatcherList dispatchers() {
        return db.read(tx -> DispatcherList.of(Dispatchers.list(tx), Dispatchers.unservedTopics(tx), store.switches(tx)));
    }
}
