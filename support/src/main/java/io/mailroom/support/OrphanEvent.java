package io.mailroom.support;

import java.time.Instant;

/**
 * A delivery event that matched no email (sent before Mailroom, by another system, or its history
 * already gone): kept for operators, never dropped.
 */
public record OrphanEvent(long id, String source, String deliveryId, Instant receivedAt, Instant occurredAt, String kind,
                          String bounceType, String providerEvent, String providerMessageId, String recipient,
                          String diagnosticCode) {
}
