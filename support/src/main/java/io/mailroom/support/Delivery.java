package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonProperty;

import java.time.Instant;

/**
 * What the provider reported about an email after accepting it: the furthest state reached
 * (delivered, deferred, bounced, complained: it never moves back), the provider's diagnostic, and
 * when the report came.
 */
public record Delivery(String state, String detail, Instant at) {

    /** The state in words. */
    @JsonProperty("stateText")
    public String stateText() {
        return switch (state) {
            case "delivered" -> "Delivered";
            case "deferred" -> "Delivery delayed; the provider is still trying";
            case "bounced" -> detail != null && detail.startsWith("soft") ? "Bounced (soft)" : "Bounced (hard)";
            case "complained" -> "Marked as spam by the recipient";
            default -> state;
        };
    }
}
