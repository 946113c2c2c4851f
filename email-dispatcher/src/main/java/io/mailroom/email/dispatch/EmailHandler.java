package io.mailroom.email.dispatch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.render.OrderConfirmationRenderer;
import io.mailroom.email.render.RenderException;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import io.mailroom.idempotency.Fingerprint;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.idempotency.Reservation;
import io.mailroom.outbox.ClaimContext;
import io.mailroom.outbox.ClaimLostException;
import io.mailroom.outbox.ClaimedMessage;
import io.mailroom.outbox.MessageHandler;
import io.mailroom.outbox.Outcome;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Function;

/**
 * Turns one claimed outbox message into at most one email per business effect.
 *
 * <ol>
 *   <li>Render the email from the payload; a payload that cannot make a valid email (bad address,
 *       header injection, oversized body, malformed JSON) fails the message for good, with the
 *       reason, before any provider is contacted.</li>
 *   <li>Reserve the effect key in the idempotency store, with a fingerprint of the email, in a short
 *       transaction of its own that commits <em>before</em> the send: if the process dies after
 *       sending, the next attempt finds the reservation and knows the outcome is unknown.</li>
 *   <li>Already sent: done without sending. Same key, different email: failed, nothing sent.
 *       Outcome unknown: the transport's {@link AmbiguityPolicy} decides (resend with the same
 *       provider key within its window, park for review, or resend).</li>
 *   <li>Send through the (resilient) transport, then report the outcome; the idempotency record is
 *       updated in the same transaction that finishes the outbox message, and only if the claim
 *       still holds.</li>
 * </ol>
 */
public final class EmailHandler implements MessageHandler {

    private static final Logger log = LoggerFactory.getLogger(EmailHandler.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long a message waits when the transport would not even try (breaker open, bulkhead full). */
    static final Duration NOT_ATTEMPTED_DELAY = Duration.ofSeconds(5);
    /** How long a message waits after the provider refused our credentials; the transport is halted meanwhile. */
    static final Duration MISCONFIGURED_DELAY = Duration.ofMinutes(1);

    private final DataSource dataSource;
    private final IdempotencyStore store;
    private final OrderConfirmationRenderer renderer;
    private final MailTransport transport;
    private final AmbiguityPolicy policy;
    private final String worker;
    private final Clock clock;

    public EmailHandler(DataSource dataSource, IdempotencyStore store, OrderConfirmationRenderer renderer,
                        MailTransport transport, AmbiguityPolicy policy, String worker, Clock clock) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.store = Objects.requireNonNull(store, "store");
        this.renderer = Objects.requireNonNull(renderer, "renderer");
        this.transport = Objects.requireNonNull(transport, "transport");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.worker = Objects.requireNonNull(worker, "worker");
        this.clock = clock == null ? Clock.systemUTC() : clock;
    }

    @Override
    public Outcome handle(ClaimedMessage message, ClaimContext context) {
        String key = message.idempotencyKey();
        Email email;
        try {
            email = renderer.render(message.payloadJson());
        } catch (RenderException e) {
            return Outcome.failed("cannot render the email: " + e.getMessage());
        } catch (InvalidEmailException e) {
            return Outcome.failed("invalid email: " + e.getMessage());
        }
        Fingerprint fingerprint = Fingerprint.of(email.fingerprintParts().toArray(String[]::new));
        String descriptor = descriptor(email);

        Reservation reservation = inTransaction(tx -> store.reserve(tx, key, fingerprint, worker, descriptor));
        switch (reservation) {
            case Reservation.AlreadySucceeded done -> {
                log.info("Effect {} was already sent (provider id {}); not sending again", key, done.resultRef());
                return Outcome.done(detail("deduplicated", true, "providerMessageId", done.resultRef()), null);
            }
            case Reservation.FingerprintMismatch mismatch -> {
                return Outcome.failed("idempotency key " + key + " was first used for a different email"
                        + " (fingerprint " + mismatch.expected().hex().substring(0, 12) + ", now "
                        + mismatch.actual().hex().substring(0, 12) + "); nothing sent");
            }
            case Reservation.OutcomeUnknown unknown -> {
                Outcome parked = decideOnUnknown(key, unknown, fingerprint, descriptor);
                if (parked != null) {
                    return parked;
                }
            }
            case Reservation.Reserved reserved -> {
                // ours: go on and send
            }
        }

        try {
            context.ensureClaimHeld();
        } catch (ClaimLostException e) {
            // Nothing was sent: give the reservation back so the new holder starts clean.
            inTransaction(tx -> store.release(tx, key));
            throw e;
        }
        SendResult result = transport.send(email, key);
        return outcome(key, result);
    }

    /** Returns the outcome that ends this attempt without sending, or null to send (reservation renewed). */
    private Outcome decideOnUnknown(String key, Reservation.OutcomeUnknown unknown, Fingerprint fingerprint,
                                   String descriptor) {
        boolean resend = switch (policy.mode()) {
            case RESEND -> true;
            case REVIEW -> false;
            case RESEND_WITH_KEY -> Duration.between(unknown.firstReservedAt(), clock.instant())
                    .compareTo(policy.keyWindow()) < 0;
        };
        if (!resend) {
            String reason = "an earlier send of " + key + " (reserved by " + unknown.reservedBy() + " at "
                    + unknown.reservedAt() + ") has an unknown outcome; parked for review, nothing sent"
                    + (policy.mode() == AmbiguityPolicy.Mode.RESEND_WITH_KEY
                    ? " (the provider's idempotency window of " + policy.keyWindow() + " has passed)" : "");
            log.warn("Effect {}: {}", key, reason);
            return new Outcome.Review(reason, detail("ambiguous", true),
                    unknown instanceof Reservation.Unrecorded ? tx -> store.markAmbiguous(tx, key, reason) : null);
        }
        Reservation again = inTransaction(tx -> store.reserveAgain(tx, unknown, fingerprint, worker, descriptor));
        if (again instanceof Reservation.Reserved r) {
            log.info("Effect {}: outcome of an earlier send unknown; sending again ({}), reservation {}",
                    key, policy.mode(), r.reservationNumber());
            return null;
        }
        // Somebody else acted on the same state first; look again on the next attempt.
        return Outcome.retryLater("the reservation of " + key + " changed meanwhile (" + again.getClass().getSimpleName() + ")");
    }

    private Outcome outcome(String key, SendResult result) {
        return switch (result) {
            case SendResult.Sent sent -> Outcome.done(sent.detailJson(),
                    tx -> store.recordSucceeded(tx, key, sent.providerMessageId()));
            case SendResult.Transient t -> new Outcome.RetryLater(t.code() + " " + t.error(), t.retryAfter(),
                    detail("code", t.code()), tx -> store.recordFailed(tx, key, t.code() + " " + t.error()));
            case SendResult.Permanent p -> new Outcome.Failed(p.code() + " " + p.error(),
                    detail("code", p.code()), tx -> store.recordFailed(tx, key, p.code() + " " + p.error()));
            case SendResult.Ambiguous a -> ambiguous(key, a);
            case SendResult.Misconfigured m -> new Outcome.NotAttempted(
                    "provider refused our configuration (" + m.code() + "): " + m.error()
                            + "; transport " + transport.name() + " is halted until an operator resumes it",
                    MISCONFIGURED_DELAY, detail("code", m.code()), tx -> store.release(tx, key));
            case SendResult.NotAttempted n -> new Outcome.NotAttempted(n.reason(),
                    n.retryAfter() == null ? NOT_ATTEMPTED_DELAY : n.retryAfter(), null, tx -> store.release(tx, key));
        };
    }

    private Outcome ambiguous(String key, SendResult.Ambiguous a) {
        String reason = "send of " + key + " through " + transport.name() + " has an unknown outcome: " + a.error();
        Outcome.TransactionalStep mark = tx -> store.markAmbiguous(tx, key, a.error());
        return switch (policy.mode()) {
            case RESEND_WITH_KEY, RESEND -> new Outcome.RetryLater(reason, null, detail("ambiguous", true), mark);
            case REVIEW -> new Outcome.Review(reason + "; parked for review, nothing more sent",
                    detail("ambiguous", true), mark);
        };
    }

    private <T> T inTransaction(Function<DSLContext, T> work) {
        return DSL.using(dataSource, SQLDialect.POSTGRES).transactionResult(cfg -> work.apply(cfg.dsl()));
    }

    private String descriptor(Email email) {
        ObjectNode node = JSON.createObjectNode();
        node.put("recipient", email.to().address());
        if (email.to().displayName() != null) {
            node.put("recipientName", email.to().displayName());
        }
        node.put("subject", email.subject());
        node.put("transport", transport.name());
        node.put("templateVersion", email.templateVersion());
        return node.toString();
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
