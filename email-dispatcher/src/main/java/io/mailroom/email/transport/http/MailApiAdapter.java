package io.mailroom.email.transport.http;

import io.mailroom.email.Email;

import java.net.http.HttpRequest;

/**
 * The wire format of one HTTP mail provider: how an email becomes a request, and how to read the
 * provider's message id and error text from a response. Status classification, timeouts and
 * retry policy are the same for every provider and live in {@link HttpMailTransport}; supporting
 * another provider means writing another adapter.
 */
public interface MailApiAdapter {

    /**
     * A request that sends {@code email}, authenticated, carrying {@code idempotencyKey} so the
     * provider deduplicates repeats. The JDK's request type only describes it (method, URI, headers,
     * body): the transport sends it with its own client and adds the timeout.
     */
    HttpRequest.Builder request(Email email, String idempotencyKey);

    /** The provider's message id in a 2xx response body, or null if there is none. */
    String messageId(String responseBody);

    /** A short, human-readable error from a non-2xx response body (the transport bounds its length). */
    String errorText(String responseBody);
}
