package io.mailroom.outbox;

import java.time.Instant;

/** Where an enqueued message landed: its id and creation time together identify the hot row. */
public record EnqueuedMessage(long id, Instant createdAt, String idempotencyKey) {
}
