/**
 * The runtime operators run. {@link io.mailroom.outbox.runtime.Dispatcher} runs
 * {@link io.mailroom.outbox.runtime.MessageHandler}s for the topics it is given, configured by an
 * immutable {@link io.mailroom.outbox.runtime.DispatcherConfig}; a handler returns a typed
 * {@link io.mailroom.outbox.runtime.Outcome}: done, retry later, failed for good, review, or not
 * attempted. Its parts, one role each: {@code Producer} (claims no more than its free slots),
 * {@code HandlerExecutor} (virtual threads), {@code Completer} (batched, fenced completion),
 * {@code ClaimLedger} (the claims this process holds), {@code HandBack}, {@code Heartbeater},
 * {@code LeaseRescuer}, {@code InterruptedClaims}; their SQL is in one store per role
 * ({@code ClaimStore}, {@code CompletionStore}, {@code LeaseStore}, {@code RescueStore},
 * {@code HistoryStore}, {@link io.mailroom.outbox.runtime.ControlStore}), wired by {@code OutboxStore}.
 */
package io.mailroom.outbox.runtime;
