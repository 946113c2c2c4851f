package io.mailroom.delivery.webhook;

import io.mailroom.delivery.DeliveryEvent;

import java.util.List;

/**
 * Reads one provider's webhook body into neutral {@link DeliveryEvent}s, as {@code MailApiAdapter}
 * writes one provider's send request on the sending side. Called only after the request's signature
 * was verified. An event type the adapter does not map is returned as
 * {@link io.mailroom.delivery.DeliveryKind#UNKNOWN}: stored and ignored, never an error, so a
 * provider adding event types does not turn its retries into a flood.
 */
public interface DeliveryEventAdapter {

    /**
     * Events one webhook request may carry, in every adapter: a provider reports on one email (one
     * recipient, a few events), so more is not a webhook but a way to write a thousand suppressions
     * with one signature. Past it the request is refused (400), never stored in part.
     */
    int MAX_EVENTS = 100;

    /** The source name: the path segment of the endpoint and {@code delivery_event.source}. */
    String source();

    /** @throws MalformedEventException naming the field, when the body is not this provider's format */
    List<DeliveryEvent> parse(byte[] body) throws MalformedEventException;
}
