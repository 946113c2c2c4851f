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
     * @param sentTo         the address the matched email was sent to, normalized; null for an orphan or when unknown
     */
    record StoredEvent(long eventId, String source, DeliveryEvent event, String address, String idempotencyKey,
                       String topic, boolean applied, String sentTo) {

        /**
         * The event names an address other than the one its email was sent to (a forward, an alias, a
         * provider's or sender's mistake). The address it names is the one acted on (suppressed); the
         * mismatch is recorded in the email's history and counted.
         */
        public boolean recipientMismatch() {
            return address != null && sentTo != null && !address.equals(sentTo);
        }
    }
}
