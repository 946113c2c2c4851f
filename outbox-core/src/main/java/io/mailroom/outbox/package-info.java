/**
 * The transactional outbox, knowing nothing about email: what business code calls, and the session
 * plumbing the other parts share.
 *
 * <h2>For business code</h2>
 * {@link io.mailroom.outbox.OutboxEnqueuer} adds a {@link io.mailroom.outbox.NewMessage} with the
 * caller's {@code DSLContext}, inside the caller's transaction; a rollback removes it too.
 *
 * <h2>Elsewhere, one package per role</h2>
 * {@link io.mailroom.outbox.runtime} is what operators run: the
 * {@link io.mailroom.outbox.runtime.Dispatcher} and its parts (producer, handler executor, completer,
 * claim ledger, heartbeat, lease rescuer). {@link io.mailroom.outbox.maintenance} keeps the tables
 * small (retention, partitions, history cleaning). {@link io.mailroom.outbox.admin} is what people do
 * to messages and to the whole outbox (retry, cancel, confirm; pause).
 */
package io.mailroom.outbox;
