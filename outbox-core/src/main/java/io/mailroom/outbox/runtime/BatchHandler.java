package io.mailroom.outbox.runtime;

import java.util.List;
import java.util.Objects;

/**
 * A {@link MessageHandler} whose messages of one claim share a step: the dispatcher runs
 * {@link #prepare} for each claimed message of the handler's topic on its own handler thread, then
 * {@link #together} once for all of them (on the thread of the last one prepared), then
 * {@link #complete} for each on its own thread again. An email handler renders in {@code prepare},
 * reserves the whole batch's idempotency keys in one commit in {@code together}, and decides and
 * sends in {@code complete}: what is per message stays per message, what costs a commit is paid once
 * per batch.
 *
 * <p>The threads of one batch wait for {@code together} without being interrupted (a stop
 * interrupts them after it), so a message's shared step never runs after its attempt was given up:
 * {@code complete} is where a handler checks that its claim still holds ({@link ClaimContext}).
 *
 * <p>Handled alone ({@link #handle}, e.g. by {@link Dispatcher#runOnce}'s callers or a message
 * claimed by itself), a message is a batch of one.
 *
 * @param <W> what one message's preparation hands to the shared step and to its completion
 */
public interface BatchHandler<W> extends MessageHandler {

    /**
     * What {@link #prepare} made of one message: the work to carry on with, or an outcome that ends
     * the attempt at once (the message takes no part in the shared step).
     */
    record Prepared<W>(W work, Outcome outcome) {

        public Prepared {
            if ((work == null) == (outcome == null)) {
                throw new IllegalArgumentException("exactly one of work and outcome must be given");
            }
        }

        public static <W> Prepared<W> of(W work) {
            return new Prepared<>(Objects.requireNonNull(work, "work"), null);
        }

        public static <W> Prepared<W> finished(Outcome outcome) {
            return new Prepared<>(null, Objects.requireNonNull(outcome, "outcome"));
        }
    }

    /** The per-message part before the shared step, on the message's handler thread. */
    Prepared<W> prepare(ClaimedMessage message, ClaimContext context) throws Exception;

    /**
     * The shared step, once for the prepared messages of one claim (at least one). If it throws,
     * every message of the batch ends its attempt as {@link Outcome#retryLater(String)}; a handler
     * that can tell the messages apart should record what it knows in each work item instead.
     */
    void together(List<W> work) throws Exception;

    /** The per-message part after the shared step, on the message's handler thread. */
    Outcome complete(W work, ClaimContext context) throws Exception;

    @Override
    default Outcome handle(ClaimedMessage message, ClaimContext context) throws Exception {
        Prepared<W> prepared = prepare(message, context);
        if (prepared.outcome() != null) {
            return prepared.outcome();
        }
        together(List.of(prepared.work()));
        return complete(prepared.work(), context);
    }
}
