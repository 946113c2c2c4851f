package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonProperty;

import java.time.Instant;

/**
 * One recipient of an email as support sees it: To, Cc or Bcc, the address and name, what the
 * provider last reported for that address (its own delivery state: a Cc may bounce while the To got
 * the email), and whether the suppression list stops mail to it now (a suppressed Cc is left out of
 * the send; the timeline says when).
 *
 * @param deliveryState delivered, deferred, bounced or complained; null when nothing was reported for it
 */
public record RecipientView(String role, String address, String name, String deliveryState, String deliveryDetail,
                            Instant deliveryAt, boolean suppressed) {

    /** The state in words, as {@link Delivery#stateText()} says it for the email. */
    @JsonProperty("deliveryText")
    public String deliveryText() {
        if (deliveryState == null) {
            return suppressed ? "Suppressed: not sent to this address" : "No report yet";
        }
        return new Delivery(deliveryState, deliveryDetail, deliveryAt).stateText();
    }
}
