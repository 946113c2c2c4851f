/**
 * What people do: {@link io.mailroom.outbox.admin.MessageActions} on one message (retry now,
 * cancel, reschedule, confirm: NOWAIT, so a busy row answers at once) and
 * {@link io.mailroom.outbox.admin.OutboxControl} on the whole outbox (cluster-wide pause); and what
 * they read: {@link io.mailroom.outbox.admin.Dispatchers}, the running dispatchers and the topics
 * none of them serves.
 */
package io.mailroom.outbox.admin;
