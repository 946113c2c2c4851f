package io.mailroom.support;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Actions applied by the server to every email matching a search (issue 26, item 4): retry, close
 * (won't send), resend from review, lift the recipients' suppressions.
 *
 * <p>The person first sees how many match ({@link #preview}) and confirms that number; {@link #start}
 * counts again and refuses when more match now than were confirmed, then runs in the background:
 * it reads the search a page at a time (keyset on when each email was queued, so emails leaving the
 * filter as they change do not shift the pages) and applies each email's single action, which locks
 * that email's row with NOWAIT in its own short transaction, checks the filter again under the lock
 * and writes the email's audit entry naming the run. So no lock is held longer than one email's
 * change, an email that stopped matching is left alone, one a dispatcher holds is counted busy and
 * left alone, and the run stops after the confirmed number of emails, whatever matches later.
 */
public final class BulkActions {

    private static final Logger log = LoggerFactory.getLogger(BulkActions.class);

    /** The most emails one run may confirm. */
    static final int MAX_CONFIRMED = 100_000;
    static final int BATCH = 100;
    /** A run silent this long was left by a process that stopped. */
    static final Duration INTERRUPTED_AFTER = Duration.ofMinutes(5);

    /** What a bulk action does and to which statuses it applies (the filter must name one of them). */
    enum Kind {
        RETRY("retry", Set.of(EmailStatus.FAILED)),
        CLOSE("close", Set.of(EmailStatus.FAILED, EmailStatus.REVIEW)),
        RESEND("resend", Set.of(EmailStatus.REVIEW)),
        LIFT_SUPPRESSION("lift-suppression", null);

        final String word;
        final Set<EmailStatus> statuses;

        Kind(String word, Set<EmailStatus> statuses) {
            this.word = word;
            this.statuses = statuses;
        }

        static Kind of(String raw) {
            String v = raw == null ? "" : raw.strip().toLowerCase(Locale.ROOT);
            for (Kind k : values()) {
                if (k.word.equals(v)) {
                    return k;
                }
            }
            throw new InvalidParameterException("action", "action must be one of retry, close, resend, lift-suppression");
        }
    }

    /** How many emails an action would apply to now. */
    public record Preview(String action, Map<String, String> filter, long matching) {
    }

    private final SupportTx db;
    private final SupportStore store;
    private final SupportQueries queries;
    private final SupportActions actions;
    private final SuppressionAdmin suppressions;
    private final BulkStore runs = new BulkStore();

    BulkActions(SupportTx db, SupportStore store, SupportQueries queries, SupportActions actions, SuppressionAdmin suppressions) {
        this.db = db;
        this.store = store;
        this.queries = queries;
        this.actions = actions;
        this.suppressions = suppressions;
    }

    private final java.util.concurrent.atomic.AtomicBoolean swept = new java.util.concurrent.atomic.AtomicBoolean();

    /** Once per process, before the first use: runs a stopped process left "running" are marked interrupted. */
    private void sweep() {
        if (swept.compareAndSet(false, true)) {
            int stale = db.write(tx -> runs.markInterrupted(tx, INTERRUPTED_AFTER));
            if (stale > 0) {
                log.warn("{} bulk action(s) were left running by a stopped support server; marked interrupted", stale);
            }
        }
    }

    Preview preview(Actor actor, String action, EmailSearch search) {
        Roles.require(actor, Role.SUPPORT);
        Kind kind = Kind.of(action);
        requireStatus(kind, search);
        sweep();
        return new Preview(kind.word, search.parameters(), queries.count(search, MAX_CONFIRMED));
    }

    /**
     * Starts the action on what matches {@code search}, after {@code confirmed} was shown to and
     * confirmed by the person; answers the run (state running) at once.
     *
     * @throws HttpFailure 409 when more emails match now than were confirmed, or none does
     */
    BulkRun start(Actor actor, String action, EmailSearch search, int confirmed, String reason) {
        Roles.require(actor, Role.SUPPORT);
        Kind kind = Kind.of(action);
        requireStatus(kind, search);
        String why = Params.reason(SupportParams.REASON, reason, true);
        if (confirmed < 1 || confirmed > MAX_CONFIRMED) {
            throw new InvalidParameterException("confirmed", "confirmed must be the number of emails shown, 1 to " + MAX_CONFIRMED);
        }
        sweep();
        long now = queries.count(search, MAX_CONFIRMED);
        if (now > confirmed) {
            throw new HttpFailure(409, "changed", "the filter now matches " + (now > MAX_CONFIRMED ? "more than " + MAX_CONFIRMED : now)
                    + " emails, more than the " + confirmed + " confirmed: count again and confirm the new number", "confirmed");
        }
        if (now == 0) {
            throw new HttpFailure(409, "changed", "no email matches the filter any more: nothing to do", "confirmed");
        }
        Map<String, String> filter = search.parameters();
        long id = db.write(tx -> {
            long run = runs.insert(tx, kind.word, filter, confirmed, (int) now, actor, why);
            Map<String, Object> detail = new LinkedHashMap<>();
            detail.put("bulk", run);
            detail.put("filter", filter);
            detail.put("confirmed", confirmed);
            detail.put("matched", now);
            store.insertAudit(tx, actor, AuditActions.BULK_PREFIX + kind.word.replace('-', '_'), null, why, SupportJson.object(detail));
            return run;
        });
        log.info("Bulk {} {} started by {} ({}): {} email(s) confirmed, {} match", kind.word, id, actor.name(),
                actor.role().word(), confirmed, now);
        Thread.ofVirtual().name("bulk-" + id).start(() -> run(id, kind, actor, search, confirmed, why));
        return get(id).orElseThrow();
    }

    Optional<BulkRun> get(long id) {
        sweep();
        return Optional.ofNullable(db.read(tx -> runs.get(tx, id)));
    }

    List<BulkRun> recent(int limit) {
        sweep();
        return db.read(tx -> runs.recent(tx, limit));
    }

    private static void requireStatus(Kind kind, EmailSearch search) {
        if (kind.statuses != null && (search.status() == null || !kind.statuses.contains(search.status()))) {
            throw new InvalidParameterException(SupportParams.STATUS, "a bulk " + kind.word + " applies to emails of status "
                    + String.join(" or ", kind.statuses.stream().map(EmailStatus::code).sorted().toList())
                    + ": put it in the filter");
        }
    }

    private void run(long id, Kind kind, Actor actor, EmailSearch search, int confirmed, String reason) {
        int applied = 0;
        int skipped = 0;
        int busy = 0;
        Set<String> lifted = new HashSet<>();
        SupportActions.InBulk bulk = new SupportActions.InBulk(id, (tx, key) -> queries.matches(tx, search, key));
        try {
            Cursor at = null;
            while (applied + skipped + busy < confirmed) {
                SearchPage page = queries.search(search.page(at, Math.min(BATCH, confirmed - applied - skipped - busy)));
                for (EmailView e : page.emails()) {
                    switch (apply(kind, actor, e, reason, bulk, search, lifted)) {
                        case ActionResult.Applied a -> applied++;
                        case ActionResult.Busy b -> busy++;
                        default -> skipped++;
                    }
                }
                int a = applied;
                int s = skipped;
                int b = busy;
                db.write(tx -> {
                    runs.progress(tx, id, a, s, b);
                    return null;
                });
                if (page.nextCursor() == null) {
                    break;
                }
                at = Cursor.decode(SupportParams.CURSOR, page.nextCursor());
            }
            db.write(tx -> {
                runs.finish(tx, id, "done", null);
                return null;
            });
            log.info("Bulk {} {} done: {} applied, {} skipped, {} busy", kind.word, id, applied, skipped, busy);
        } catch (RuntimeException e) {
            log.error("Bulk {} {} failed after {} applied", kind.word, id, applied, e);
            String message = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
            db.write(tx -> {
                runs.finish(tx, id, "failed", message.length() > 500 ? message.substring(0, 500) : message);
                return null;
            });
        }
    }

    private ActionResult apply(Kind kind, Actor actor, EmailView e, String reason, SupportActions.InBulk bulk,
                               EmailSearch search, Set<String> lifted) {
        return switch (kind) {
            case RETRY -> actions.retry(actor, e.key(), reason, bulk);
            case CLOSE -> actions.close(actor, e.key(), reason, bulk);
            case RESEND -> actions.resend(actor, e.key(), reason, bulk);
            case LIFT_SUPPRESSION -> lift(actor, e, reason, bulk, search, lifted);
        };
    }

    /** Lifts the suppressions of the email's recipient, once per address in a run. */
    private ActionResult lift(Actor actor, EmailView e, String reason, SupportActions.InBulk bulk, EmailSearch search,
                              Set<String> lifted) {
        String address = e.suppression() == null ? null : e.suppression().address();
        if (address == null || !lifted.add(address) || !db.read(tx -> queries.matches(tx, search, e.key()))) {
            return new ActionResult.NotAllowed(e.key(), e.status(), "no suppression of its recipient to lift", ApiError.NOT_ALLOWED);
        }
        try {
            suppressions.liftSuppression(actor, address, reason + " (bulk action " + bulk.id() + ")");
            return new ActionResult.Applied(AuditActions.LIFT_SUPPRESSION, null, null);
        } catch (HttpFailure conflict) {
            return new ActionResult.NotAllowed(e.key(), e.status(), conflict.getMessage(), ApiError.NOT_ALLOWED);
        }
    }
}
