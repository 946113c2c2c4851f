package io.mailroom.spring;

import org.springframework.transaction.IllegalTransactionStateException;

/**
 * An email was enqueued where no Spring-managed transaction holds a connection of the application's
 * {@code DataSource}: outside any {@code @Transactional} method, in a read-only one, or in a
 * transaction of another resource. Written there, the email would commit on its own, before and
 * regardless of the business change it announces, which is what the outbox exists to prevent; so
 * nothing is written. It is Spring's own {@link IllegalTransactionStateException}, the error of a
 * {@code MANDATORY} propagation without a transaction.
 */
public final class EnqueueOutsideTransactionException extends IllegalTransactionStateException {

    public EnqueueOutsideTransactionException(String message) {
        super(message);
    }
}
