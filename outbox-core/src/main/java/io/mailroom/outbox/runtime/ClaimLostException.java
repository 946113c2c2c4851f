package io.mailroom.outbox.runtime;

import io.mailroom.outbox.OutboxException;

/** The message's claim is no longer this worker's; stop and record nothing. */
public final class ClaimLostException extends OutboxException {

    public ClaimLostException(String message) {
        super(message);
    }
}
