package io.mailroom.support;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Which emails to list: one status, optionally changed within {@code [since, until)}, optionally
 * created more than {@code olderThan} ago ("pending for more than 30 minutes"), a page at a time,
 * newest change first. Sent emails are listed newest queued first and {@code since}/{@code until}
 * bound when they were queued: nearly every email is sent, and the time an outcome was written is
 * kept out of every index so that writing it stays in place (V29). Build it from raw request values
 * with {@link Params#filter}.
 *
 * @param cursor where the previous page ended, or null for the first page
 */
public record EmailFilter(EmailStatus status, Instant since, Instant until, Duration olderThan, Cursor cursor, int limit) {

    public EmailFilter {
        Objects.requireNonNull(status, "status");
        if (status == EmailStatus.SENDING) {
            throw new InvalidParameterException("status", "status must be one of pending, scheduled, failed, review, sent, cancelled, closed");
        }
        if (since != null && until != null && !since.isBefore(until)) {
            throw new InvalidParameterException("since", "since must be before until");
        }
        if (olderThan != null && (olderThan.isNegative() || olderThan.isZero())) {
            throw new InvalidParameterException("olderThan", "olderThan must be a positive duration");
        }
        if (limit < 1 || limit > SupportService.MAX_PAGE_SIZE) {
            throw new InvalidParameterException("limit", "limit must be between 1 and " + SupportService.MAX_PAGE_SIZE);
        }
    }

    public static EmailFilter of(EmailStatus status) {
        return new EmailFilter(status, null, null, null, null, SupportService.DEFAULT_PAGE_SIZE);
    }
}
