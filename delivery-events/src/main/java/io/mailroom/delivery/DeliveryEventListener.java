package io.mailroom.delivery;

import org.jooq.DSLContext;

/**
 * Told of every event as it is stored, in the ingesting transaction, so what it writes commits or
 * rolls back with the event (the suppression list is one). Called once per stored event: a replayed
 * delivery stores nothing and calls nothing.
 */
@FunctionalInterface
public interface DeliveryEventListener {

    /**
     * @param tx        the ingesting transaction
     * @param stored    the event as stored: its id, normalized recipient, and the email it matched
     */
    void onStored(DSLContext tx, StoredEvent stored);

    /**
     * @param eventId        {@code delivery_event.id}
     * @param source         the adapter that read it ({@code neutral}, {@code resend}, {@code dsn})
     * @param event          the event as read
     * @param address        the recipient normalized by {@link Addresses#normalize}, null when none was reported
     * @param idempotencyKey the email it matched, null for an orphan
     * @param topic          that email's topic, null for an orphan
     * @param applied        whether it moved the email's delivery state
     */
    record StoredEvent(long eventId, String source, DeliveryEvent event, String address, String idempotencyKey,
                       String topic, boolean applied) {
    }
}
