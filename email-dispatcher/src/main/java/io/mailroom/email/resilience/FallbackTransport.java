package io.mailroom.email.resilience;

import io.mailroom.email.Email;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * A topic's ordered providers ({@code transport=smtp,http}), each its own {@link ResilientTransport}
 * with its own breaker and retry. The idempotency key is the email's for every provider.
 *
 * <p>The next provider is tried only when {@link FailoverDecision} says the one before accepted
 * nothing, and never in the same attempt as a provider that was asked: a proven refusal ends the
 * attempt as a transient failure (retried at once), so that the refusal is committed with the attempt
 * and the idempotency record before any other provider is asked. Were the next one asked at once, a
 * crash between the two would leave the key reserved with no outcome, and an email that nobody took
 * would be parked for review as "maybe sent". So a crash at any point leaves either a recorded
 * refusal (the next attempt sends, once) or one provider whose outcome is unknown (review, as without
 * a fallback). Which provider the next attempt starts at is remembered here, in memory: after a
 * restart the first provider is asked again, which is safe, because it took nothing before.
 *
 * <p>A provider that was not asked ({@link SendResult.NotAttempted}: breaker open, halted, bulkhead
 * full) is passed over within the attempt; when none was asked, the attempt is handed back uncounted.
 */
public final class FallbackTransport implements MailTransport {

    private static final Logger log = LoggerFactory.getLogger(FallbackTransport.class);
    /** Keys remembered at most; a dispatcher sends far fewer emails at once. Past it the oldest go. */
    static final int MAX_REMEMBERED = 100_000;

    /** Called when a provider proved it accepted nothing and the next attempt goes to the next one. */
    @FunctionalInterface
    public interface Listener {
        void failingOver(String idempotencyKey, String from, SendResult why, String to);
    }

    private final List<MailTransport> providers;
    private final String name;
    private final Listener listener;
    /** Per key, the provider the next attempt starts at (absent: the first). */
    private final ConcurrentHashMap<String, Integer> startAt = new ConcurrentHashMap<>();

    public FallbackTransport(List<? extends MailTransport> providers) {
        this(providers, (key, from, why, to) -> {
        });
    }

    public FallbackTransport(List<? extends MailTransport> providers, Listener listener) {
        if (providers.size() < 2) {
            throw new IllegalArgumentException("a fallback needs at least two providers, got " + providers.size());
        }
        this.providers = List.copyOf(providers);
        this.name = this.providers.stream().map(MailTransport::name).collect(Collectors.joining(","));
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** The providers' names joined by commas, as configured: {@code smtp,http}. */
    @Override
    public String name() {
        return name;
    }

    public List<MailTransport> providers() {
        return providers;
    }

    @Override
    public SendResult send(Email email, String idempotencyKey) {
        return call(email, idempotencyKey, false);
    }

    @Override
    public SendResult resend(Email email, String idempotencyKey) {
        return call(email, idempotencyKey, true);
    }

    private SendResult call(Email email, String key, boolean resend) {
        Objects.requireNonNull(email, "email");
        int first = startAt.getOrDefault(Objects.requireNonNull(key, "key"), 0);
        SendResult.NotAttempted notAsked = null;
        for (int i = first; i < providers.size(); i++) {
            MailTransport provider = providers.get(i);
            SendResult result = resend ? provider.resend(email, key) : provider.send(email, key);
            switch (FailoverDecision.of(result)) {
                case SKIP -> {
                    notAsked = notAsked == null ? (SendResult.NotAttempted) result : notAsked;
                    continue;
                }
                case NEXT -> {
                    if (i + 1 < providers.size()) {
                        return refused(key, i, result);
                    }
                }
                case DONE -> {
                }
            }
            startAt.remove(key);
            return result;
        }
        startAt.remove(key);
        return new SendResult.NotAttempted("no provider of " + name + " could be asked (" + notAsked.reason() + ")",
                notAsked.retryAfter(), false);
    }

    /** Provider {@code i} took nothing: end this attempt, recorded, and start the next one at {@code i + 1}. */
    private SendResult refused(String key, int i, SendResult why) {
        String from = providers.get(i).name();
        String to = providers.get(i + 1).name();
        if (startAt.size() >= MAX_REMEMBERED) {
            startAt.clear(); // forgetting is safe: a forgotten key starts at the first provider again
        }
        startAt.put(key, i + 1);
        listener.failingOver(key, from, why, to);
        String code = switch (why) {
            case SendResult.Transient t -> t.code();
            case SendResult.Misconfigured m -> m.code();
            default -> "refused";
        };
        String error = switch (why) {
            case SendResult.Transient t -> t.error();
            case SendResult.Misconfigured m -> m.error();
            default -> why.toString();
        };
        log.info("Effect {}: {} accepted nothing ({}); the next attempt goes to {}", key, from, code, to);
        return new SendResult.Transient(code, from + " accepted nothing (" + error + "); failing over to " + to,
                Duration.ZERO, false, SendResult.Scope.EMAIL);
    }

    @Override
    public void close() {
        // the providers are closed by their owner, which may share them between topics
    }
}
