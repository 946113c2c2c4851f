package io.mailroom.delivery.suppression;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * One row of the suppression list.
 *
 * @param eventId   the delivery event that caused it, null when added by a person
 * @param liftedAt  null while it is in force
 */
public record Suppression(long id, String address, SuppressionReason reason, String detail, Long eventId,
                         Instant createdAt, String createdBy, Instant liftedAt, String liftedBy, String liftReason) {

    private static final DateTimeFormatter DAY = DateTimeFormatter.ISO_LOCAL_DATE.withZone(ZoneOffset.UTC);

    public boolean active() {
        return liftedAt == null;
    }

    /**
     * The last error of an email not sent because of it, e.g.
     * {@code suppressed (hard bounce on 2026-12-04: smtp; 550 5.1.1 user unknown)}.
     */
    public String failureReason() {
        String why = reason.words() + " on " + DAY.format(createdAt);
        return "suppressed (" + why + (detail == null || detail.isBlank() ? "" : ": " + detail) + ")";
    }
}
