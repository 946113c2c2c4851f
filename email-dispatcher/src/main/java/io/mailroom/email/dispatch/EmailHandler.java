package io.mailroom.email.dispatch;

import io.mailroom.db.MailroomSchema;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.delivery.suppression.Suppression;
import io.mailroom.email.EmailJson;
import io.mailroom.email.Email;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.render.RenderException;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import io.mailroom.idempotency.Fingerprint;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.idempotency.Reservation;
import io.mailroom.idempotency.ReservationConflictException;
import io.mailroom.idempotency.TransitionRejectedException;
import io.mailroom.outbox.runtime.BatchHandler;
import io.mailroom.outbox.runtime.ClaimContext;
import io.mailroom.outbox.runtime.ClaimLostException;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Outcome;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Turns claimed outbox messages into at most one email per business effect. The dispatcher hands
 * it a claim's messages of one topic as a batch ({@link BatchHandler}); what is per message runs on
 * the message's own handler thread, what costs a commit is paid once per batch.
 *
 * <ol>
 *   <li>{@link #prepare}, per message: render the email from the payload; a payload that cannot make
 *       a valid email (bad address, header injection, oversized body, malformed JSON) fails the
 *       message for good, with the reason, before any provider is contacted.</li>
 *   <li>{@link #together}, once per batch: look the recipients up on the suppression list (one
 *       query, in the reservation's transaction); a suppressed recipient's email ends failed with
 *       the reason, reserves no key and costs no provider request. Then reserve every other effect key in the idempotency store, each
 *       with a fingerprint of its request (see {@link EmailComposer.Composed#fingerprintParts()}),
 *       and store the renderings of those reserved ({@link RenderingStore}), in one short
 *       transaction that commits <em>before</em> any of them is sent: if the process dies after
 *       sending (or anywhere after that commit), the next attempt finds each reservation and knows
 *       its outcome is unknown.</li>
 *   <li>{@link #complete}, per message: already sent, done without sending. Same key, different
 *       request: failed, nothing sent. Outcome unknown: the transport's {@link AmbiguityPolicy}
 *       decides (resend with the same provider key within its window, park for review, or resend a
 *       bounded number of times). A new template version changes none of this: it is not part of
 *       the fingerprint.</li>
 *   <li>Send through the (resilient) transport, then report the outcome; the idempotency record is
 *       updated in the same transaction that finishes the outbox message, only if the claim still
 *       holds, and only for the reservation this attempt holds (every transition is fenced by its
 *       number, so a stale attempt cannot overwrite a newer one's record). The completer writes the
 *       records of a whole completion batch in one statement ({@link IdempotencyStore#recordAll}).</li>
 * </ol>
 */
public final class EmailHandler implements BatchHandler<EmailHandler.Work> {

    private static final Logger log = LoggerFactory.getLogger(EmailHandler.class);
    private static final ObjectMapper JSON = EmailJson.mapper();
    /** How long a message waits when the transport would not even try (breaker open, bulkhead full). */
    static final Duration NOT_ATTEMPTED_DELAY = Duration.ofSeconds(5);
    /** How long a message waits after the provider refused our credentials; the transport is halted meanwhile. */
    static final Duration MISCONFIGURED_DELAY = Duration.ofMinutes(1);

    private final DataSource dataSource;
    /** The schema {@code dataSource} was {@linkplain MailroomSchema#bind bound} to before this was built, looked up once. */
    private final MailroomSchema schema;
    private final IdempotencyStore store;
    private final EmailComposer composer;
    private final MailTransport transport;
    private final AmbiguityPolicy policy;
    private final String worker;
    private final Clock clock;
    private final RenderingStore renderings = new RenderingStore();
    private final SuppressionCheck suppressions;
    private final ReservationSession reservations;

    public EmailHandler(DataSource dataSource, IdempotencyStore store, EmailComposer composer,
                        MailTransport transport, AmbiguityPolicy policy, String worker, Clock clock) {
        this(dataSource, store, composer, transport, policy, worker, clock, SuppressionCheck.OFF);
    }

    public EmailHandler(DataSource dataSource, IdempotencyStore store, EmailComposer composer,
                        MailTransport transport, AmbiguityPolicy policy, String worker, Clock clock,
                        SuppressionCheck suppressions) {
        this.suppressions = Objects.requireNonNull(suppressions, "suppressions");
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.schema = MailroomSchema.of(dataSource);
        this.store = Objects.requireNonNull(store, "store");
        this.composer = Objects.requireNonNull(composer, "composer");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.worker = Objects.requireNonNull(worker, "worker");
        this.clock = clock == null ? Clock.systemUTC() : clock;
        this.reservations = new ReservationSession(dataSource, schema, store, worker);
    }

    /**
     * One message's email between the steps: what was rendered, and (after {@link #together}) the
     * answer of the idempotency store for its key.
     */
    public static final class Work {
        private final ClaimedMessage message;
        private final Email email;
        private final Fingerprint fingerprint;
        private final String descriptor;
        private final RenderingStore.Rendering rendering;
        private Reservation reservation; // written by together, read by complete: the round's lock orders them
        private Suppression suppressed; // likewise; set instead of a reservation
        private Email sending; // likewise: the email without the recipients the suppression list leaves out
        private List<RecipientSuppression.Dropped> dropped = List.of(); // likewise: those left out

        private Work(ClaimedMessage message, Email email, Fingerprint fingerprint, String descriptor,
                     RenderingStore.Rendering rendering) {
            this.message = message;
            this.email = email;
            this.fingerprint = fingerprint;
            this.descriptor = descriptor;
            this.rendering = rendering;
        }

        private IdempotencyStore.Request request() {
            return new IdempotencyStore.Request(message.idempotencyKey(), fingerprint, descriptor);
        }
    }

    /**
     * Renders the email; a payload that cannot make a valid email fails the message for good, before
     * any reservation or provider.
     */
    @Override
    public Prepared<Work> prepare(ClaimedMessage message, ClaimContext context) {
        EmailComposer.Composed composed;
        try {
            composed = composer.compose(message);
        } catch (RenderException e) {
            return Prepared.finished(Outcome.failed("cannot render the email: " + e.getMessage()));
        } catch (InvalidEmailException e) {
            return Prepared.finished(Outcome.failed("invalid email: " + e.getMessage()));
        }
        Email email = composed.email();
        // The request, not its rendering: see EmailComposer for why.
        Fingerprint fingerprint = Fingerprint.of(composed.fingerprintParts().toArray(String[]::new));
        return Prepared.of(new Work(message, email, fingerprint, SendDescriptor.of(email, transport.name()),
                RenderingStore.Rendering.of(message, composed)));
    }

    /**
     * Reserves every key of the batch and stores the renderings of those reserved, in one short
     * transaction that commits before any of them is sent. Should two batches sharing keys meet in
     * the opposite order (a deadlock, 40P01) or conflict, the keys are reserved one by one, each in
     * its own transaction, as a batch of one would be.
     */
    @Override
    public void together(List<Work> batch) {
        try {
            reserveInOneTransaction(batch);
        } catch (RuntimeException e) {
            if (batch.size() == 1 || !retryAlone(e)) {
                throw e;
            }
            log.info("Batch reservation of {} keys conflicted (SQLSTATE {}); reserving them one by one",
                    batch.size(), SqlStates.sqlState(e));
            for (Work w : batch.stream().sorted(java.util.Comparator.comparing(w -> w.message.idempotencyKey())).toList()) {
                reserveInOneTransaction(List.of(w));
            }
        }
    }

    private void reserveInOneTransaction(List<Work> batch) {
        // one session; a lost connection goes again on a fresh one (see ReservationSession for why that is safe)
        Reserved reserved = reservations.run(tx -> {
            List<Work> sendable = withoutSuppressed(tx, batch);
            List<Reservation> got = sendable.isEmpty() ? List.of()
                    : store.reserveAll(tx, sendable.stream().map(Work::request).toList(), worker);
            List<RenderingStore.Rendering> sending = new ArrayList<>(sendable.size());
            Set<String> keys = new HashSet<>();
            for (int i = 0; i < got.size(); i++) {
                // a key twice in one batch is reserved by its first message only
                Work w = sendable.get(i);
                if (got.get(i) instanceof Reservation.Reserved && keys.add(w.message.idempotencyKey())) {
                    sending.add(w.rendering);
                    if (!w.dropped.isEmpty()) {
                        RecipientSuppression.record(tx, w.message.idempotencyKey(), w.dropped, worker, clock.instant());
                    }
                }
            }
            renderings.upsert(tx, sending);
            return new Reserved(sendable, got);
        }, r -> r.answers().stream().filter(Reservation.Reserved.class::isInstance).map(Reservation.Reserved.class::cast).toList());
        // published only once the transaction committed: a rolled-back attempt leaves the batch as it was
        for (int i = 0; i < reserved.works().size(); i++) {
            reserved.works().get(i).reservation = reserved.answers().get(i);
        }
    }

    /** The emails a batch reservation reserved keys for, and the store's answer for each. */
    private record Reserved(List<Work> works, List<Reservation> answers) {
    }

    /**
     * Marks the batch's emails none of whose To may get them (the suppression list, under their topic's
     * policy; {@link RecipientSuppression}), in one query, and returns the others, each without its
     * suppressed recipients. Blocked ones get no reservation: nothing is, or will be, in flight.
     */
    private List<Work> withoutSuppressed(DSLContext tx, List<Work> batch) {
        for (Work w : batch) {
            w.suppressed = null;
            w.sending = w.email;
            w.dropped = List.of();
        }
        if (!suppressions.on()) {
            return batch;
        }
        Map<String, List<Suppression>> active = suppressions.list().active(tx,
                RecipientSuppression.addresses(batch.stream().map(w -> w.email).toList()));
        if (active.isEmpty()) {
            return batch;
        }
        List<Work> sendable = new ArrayList<>(batch.size());
        for (Work w : batch) {
            RecipientSuppression.Verdict v = RecipientSuppression.judge(w.email, active, suppressions.policy(w.message.topic()));
            if (v.blocked() != null && alreadySent(tx, w.message.idempotencyKey())) {
                // sent before its address was suppressed (the bounce is about that send): the
                // reservation answers "already sent" and the message ends done, not failed
                sendable.add(w);
            } else if (v.blocked() != null) {
                w.suppressed = v.blocked();
                log.info("Effect {} not sent: its recipient {} is suppressed ({})", w.message.idempotencyKey(),
                        w.email.to().masked(), v.blocked().reason().words());
            } else {
                w.sending = v.sendable();
                w.dropped = v.dropped();
                sendable.add(w);
            }
        }
        return sendable;
    }

    private static boolean retryAlone(RuntimeException e) {
        return SqlStates.is(e, SqlStates.DEADLOCK_DETECTED) || e instanceof ReservationConflictException;
    }

    private boolean alreadySent(DSLContext tx, String key) {
        return store.find(tx, key).map(r -> r.state() == io.mailroom.idempotency.EffectState.SUCCEEDED).orElse(false);
    }

    /** Decides by the reservation's answer; sends only under a reservation this attempt holds. */
    @Override
    public Outcome complete(Work work, ClaimContext context) {
        String key = work.message.idempotencyKey();
        if (work.suppressed != null) {
            return Outcome.failed(work.suppressed.failureReason());
        }
        Reservation.Reserved held;
        switch (work.reservation) {
            case null -> throw new IllegalStateException("message " + work.message.id() + " was not reserved");
            case Reservation.AlreadySucceeded done -> {
                log.info("Effect {} was already sent (provider id {}); not sending again", key, done.resultRef());
                return Outcome.done(detail("deduplicated", true, "providerMessageId", done.resultRef()), null);
            }
            case Reservation.FingerprintMismatch mismatch -> {
                return Outcome.failed("idempotency key " + key + " was first used for a different email"
                        + " (another recipient or order data; fingerprint " + mismatch.expected().hex().substring(0, 12)
                        + ", now " + mismatch.actual().hex().substring(0, 12) + "); nothing sent");
            }
            case Reservation.OutcomeUnknown unknown -> {
                Decision decision = decideOnUnknown(key, unknown, work.fingerprint, work.descriptor, work.rendering);
                if (decision.parked() != null) {
                    return decision.parked();
                }
                held = decision.repeat();
            }
            case Reservation.Reserved reserved -> held = reserved;
        }

        try {
            context.ensureClaimHeld();
        } catch (ClaimLostException e) {
            giveBack(key, held);
            throw e;
        }
        // a repeat of an unknown outcome must not decide the transport's health (nor take a half-open probe)
        Email email = work.sending == null ? work.email : work.sending;
        SendResult result = work.reservation instanceof Reservation.OutcomeUnknown
                ? transport.resend(email, key) : transport.send(email, key);
        return outcome(key, held, result);
    }

    /**
     * Nothing was sent and the claim is gone: give back this attempt's reservation, and only that
     * one. If the new holder of the message already reserved the key again, the fenced release
     * changes nothing; turning the new holder's live reservation into a known failure would let a
     * later attempt resend without knowing that an outcome was unknown.
     */
    private void giveBack(String key, Reservation.Reserved held) {
        try {
            inTransaction(tx -> store.release(tx, key, held.reservationNumber()));
        } catch (TransitionRejectedException e) {
            log.debug("Claim of {} lost; reservation {} is no longer ours, left as it is ({})", key,
                    held.reservationNumber(), e.getMessage());
        }
    }

    /** Either the outcome that ends this attempt without sending, or the reservation to send under. */
    private record Decision(Outcome parked, Reservation.Reserved repeat) {
    }

    private Decision decideOnUnknown(String key, Reservation.OutcomeUnknown unknown, Fingerprint fingerprint,
                                     String descriptor, RenderingStore.Rendering rendering) {
        if (!policy.mayRepeat(unknown, clock.instant())) {
            String why = switch (policy.mode()) {
                case REVIEW -> "";
                case RESEND_WITH_KEY -> " (the provider's idempotency window of " + policy.keyWindow() + " has passed)";
                case RESEND -> " (already sent again " + unknown.repeats() + " time(s), the most allowed by"
                        + " MAILROOM_SMTP_AMBIGUOUS_RESENDS)";
            };
            String reason = "an earlier send of " + key + " (reserved by " + unknown.reservedBy() + " at "
                    + unknown.reservedAt() + ") has an unknown outcome; parked for review, nothing sent" + why;
            log.warn("Effect {}: {}", key, reason);
            int seen = unknown.reservations();
            return new Decision(new Outcome.Review(reason, detail("ambiguous", true),
                    unknown instanceof Reservation.Unrecorded ? tx -> store.markAmbiguous(tx, key, seen, reason) : null),
                    null);
        }
        Reservation again = inTransaction(tx -> withRendering(tx,
                store.reserveAgain(tx, unknown, fingerprint, worker, descriptor), rendering));
        if (again instanceof Reservation.Reserved r) {
            log.info("Effect {}: outcome of an earlier send unknown; sending again ({}), reservation {}, repeat {}",
                    key, policy.mode(), r.reservationNumber(), r.repeats());
            return new Decision(null, r);
        }
        // Somebody else acted on the same state first; look again on the next attempt.
        return new Decision(Outcome.retryLater("the reservation of " + key + " changed meanwhile ("
                + again.getClass().getSimpleName() + ")"), null);
    }

    private Outcome outcome(String key, Reservation.Reserved held, SendResult result) {
        int n = held.reservationNumber();
        return switch (result) {
            case SendResult.Sent sent -> Outcome.done(sent.detailJson(),
                    record(IdempotencyStore.Transition.succeeded(key, n, sent.providerMessageId())));
            // the server refused our session, not this email: it waits uncounted while the transport is
            // paused (its breaker open), and goes when a probe finds the session accepted again
            case SendResult.Transient t when t.scope() == SendResult.Scope.SESSION -> new Outcome.NotAttempted(
                    t.code() + " " + t.error(), t.retryAfter() == null ? NOT_ATTEMPTED_DELAY : t.retryAfter(),
                    detail("code", t.code()), tx -> store.release(tx, key, n), waitingForBreaker());
            case SendResult.Transient t -> new Outcome.RetryLater(t.code() + " " + t.error(), t.retryAfter(),
                    detail("code", t.code()), record(IdempotencyStore.Transition.failed(key, n, t.code() + " " + t.error())));
            case SendResult.Permanent p -> new Outcome.Failed(p.code() + " " + p.error(),
                    detail("code", p.code()), record(IdempotencyStore.Transition.failed(key, n, p.code() + " " + p.error())));
            case SendResult.Ambiguous a -> ambiguous(key, held, a);
            case SendResult.Misconfigured m -> new Outcome.NotAttempted(
                    "provider refused our configuration (" + m.code() + "): " + m.error()
                            + "; transport " + transport.name() + " is halted until an operator resumes it",
                    MISCONFIGURED_DELAY, detail("code", m.code()), tx -> store.release(tx, key, n), waitingForBreaker());
            case SendResult.NotAttempted x -> new Outcome.NotAttempted(x.reason(),
                    x.retryAfter() == null ? NOT_ATTEMPTED_DELAY : x.retryAfter(), null, tx -> store.release(tx, key, n),
                    x.byBreaker() ? waitingForBreaker() : null);
        };
    }

    /** What an email the breaker held back waits for: {@link BreakerRecovery} ends the wait when it lets calls through. */
    private String waitingForBreaker() {
        return BreakerRecovery.waitingFor(transport.name());
    }

    /**
     * This attempt's outcome is unknown. Resend mode sends again only while repeats are left, and
     * not before {@link AmbiguityPolicy#resendDelay}: a server that took the data and never answered
     * may have delivered every copy, so hammering it multiplies the duplicates.
     */
    private Outcome ambiguous(String key, Reservation.Reserved held, SendResult.Ambiguous a) {
        String reason = "send of " + key + " through " + transport.name() + " has an unknown outcome: " + a.error();
        Outcome.TransactionalStep mark = record(IdempotencyStore.Transition.ambiguous(key, held.reservationNumber(), a.error()));
        return switch (policy.mode()) {
            case RESEND_WITH_KEY -> new Outcome.RetryLater(reason, null, detail("ambiguous", true), mark);
            case RESEND -> policy.resendsLeft(held.repeats())
                    ? new Outcome.RetryLater(reason, policy.resendDelay(held.repeats() + 1), detail("ambiguous", true), mark)
                    : new Outcome.Review(reason + "; sent again " + held.repeats() + " time(s), the most allowed by"
                    + " MAILROOM_SMTP_AMBIGUOUS_RESENDS; parked for review, nothing more sent", detail("ambiguous", true), mark);
            case REVIEW -> new Outcome.Review(reason + "; parked for review, nothing more sent",
                    detail("ambiguous", true), mark);
        };
    }

    /** The idempotency outcome of one send, written with the others of its batch ({@link IdempotencyOutcome}). */
    private Outcome.GroupedStep record(IdempotencyStore.Transition transition) {
        return new IdempotencyOutcome(store, transition);
    }

    /**
     * Stores what this attempt is about to send, in the transaction that reserved the key for it, so
     * support sees what the customer got even if the process dies mid-send. Only a reservation to
     * send under writes it: a send that is skipped leaves the earlier attempt's rendering.
     */
    private Reservation withRendering(DSLContext tx, Reservation reservation, RenderingStore.Rendering rendering) {
        if (reservation instanceof Reservation.Reserved) {
            renderings.upsert(tx, List.of(rendering));
        }
        return reservation;
    }

    private <T> T inTransaction(Function<DSLContext, T> work) {
        return schema.dsl(dataSource).transactionResult(cfg -> work.apply(cfg.dsl()));
    }

    private static String detail(Object... pairs) {
        ObjectNode node = JSON.createObjectNode();
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            Object v = pairs[i + 1];
            if (v == null) {
                node.putNull(pairs[i].toString());
            } else if (v instanceof Boolean b) {
                node.put(pairs[i].toString(), b);
            } else {
                node.put(pairs[i].toString(), v.toString());
            }
        }
        return node.toString();
    }

}
