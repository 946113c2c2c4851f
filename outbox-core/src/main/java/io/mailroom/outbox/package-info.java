/**
 * The transactional outbox, knowing nothing about email.
 *
 * <h2>For business code</h2>
 * {@link io.mailroom.outbox.OutboxEnqueuer} adds a {@link io.mailroom.outbox.NewMessage} with the
 * caller's {@code DSLContext}, inside the caller's transaction; a rollback removes it too.
 *
 * <h2>For operators</h2>
 * {@link io.mailroom.outbox.Dispatcher} runs {@link io.mailroom.outbox.MessageHandler}s for the
 * topics it is given, configured by an immutable {@link io.mailroom.outbox.DispatcherConfig}. A
 * handler returns a typed {@link io.mailroom.outbox.Outcome}: done, retry later (after a delay),
 * failed for good, or review. Its parts, one role each: {@code Producer} (claims no more than its
 * free slots), {@code HandlerExecutor} (virtual threads), {@code Completer} (batched, fenced
 * completion), {@code ClaimLedger} (the claims this process holds), {@code HandBack},
 * {@code Heartbeater}, {@code LeaseRescuer}; their SQL is in the stores {@code OutboxStore} wires,
 * one per role ({@code ClaimStore}, {@code CompletionStore}, {@code LeaseStore}, {@code RescueStore},
 * {@code HistoryStore}, {@code ControlStore}).
 *
 * <h2>For people</h2>
 * {@link io.mailroom.outbox.MessageActions} (retry now, cancel, reschedule, confirm: NOWAIT, so a
 * busy row answers at once) and {@link io.mailroom.outbox.OutboxControl} (cluster-wide pause).
 */
package io.mailroom.outbox;
