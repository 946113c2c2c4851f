package io.mailroom.email.dispatch;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.email.EmailJson;
import io.mailroom.email.EmailAddress;
import io.mailroom.outbox.runtime.DispatcherListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One log line for every email that ends {@code failed} or parked in {@code review}: its key,
 * topic, the reason stored with it and its recipient masked as every other log line masks it
 * ({@link EmailAddress#masked()}), so that an operator reading the log learns of it without opening
 * the console. Failed is a warning (nothing more happens to it), review an info (a person decides).
 */
public final class EndedEmailLog implements DispatcherListener {

    private static final Logger log = LoggerFactory.getLogger(EndedEmailLog.class);

    @Override
    public void ended(String idempotencyKey, String topic, String status, String reason, String payloadJson) {
        String to = recipient(payloadJson);
        if ("review".equals(status)) {
            log.info("Email {} on {} to {} parked in review: {}", idempotencyKey, topic, to, reason);
        } else {
            log.warn("Email {} on {} to {} failed: {}", idempotencyKey, topic, to, reason);
        }
    }

    /**
     * The recipient of an email envelope ({@code to.address}) or of the legacy order payload
     * ({@code customerEmail}), masked; "an unreadable address" when the payload names none.
     */
    static String recipient(String payloadJson) {
        try {
            JsonNode root = payloadJson == null ? null : EmailJson.mapper().readTree(payloadJson);
            if (root == null || !root.isObject()) {
                return "an unreadable address";
            }
            JsonNode address = root.path("to").path("address");
            if (!address.isTextual()) {
                address = root.path("customerEmail");
            }
            if (!address.isTextual()) {
                return "an unreadable address";
            }
            return EmailAddress.of(address.textValue(), null).masked();
        } catch (RuntimeException | java.io.IOException e) {
            // a payload that makes no valid address is itself a reason the email failed; never quote it
            return "an unreadable address";
        }
    }
}
