package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.mailroom.delivery.suppression.Suppression;

import java.time.Instant;

/** One entry of the suppression list as support sees it. */
public record SuppressionView(long id, String address, String reason, String detail, Long eventId, Instant createdAt,
                              String createdBy, Instant liftedAt, String liftedBy, String liftReason) {

    static SuppressionView of(Suppression s) {
        return new SuppressionView(s.id(), s.address(), s.reason().dbValue(), s.detail(), s.eventId(), s.createdAt(),
                s.createdBy(), s.liftedAt(), s.liftedBy(), s.liftReason());
    }

    @JsonProperty("active")
    public boolean active() {
        return liftedAt == null;
    }

    /** The reason in words: "hard bounce", "complaint", "soft bounces in a row", "added by hand". */
    @JsonProperty("reasonText")
    public String reasonText() {
        return io.mailroom.delivery.suppression.SuppressionReason.fromDb(reason).words();
    }
}
