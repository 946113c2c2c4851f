package io.mailroom.email.dispatch;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.EmailJson;
import io.mailroom.email.EmailRecipients;

/**
 * What the idempotency record says of a send, for support and the delivery events' matching:
 * {@code recipient} (the first To) and its name, the subject, the transport and template version,
 * and, for an email with more than one recipient, {@code recipients} ({@code [{"role":"cc",
 * "address":..,"name":..}]}, every one in To, Cc, Bcc order), and its {@code tags} when it has any.
 */
final class SendDescriptor {

    private SendDescriptor() {
    }

    static String of(Email email, String transport) {
        ObjectNode node = EmailJson.mapper().createObjectNode();
        node.put("recipient", email.to().address());
        if (email.to().displayName() != null) {
            node.put("recipientName", email.to().displayName());
        }
        node.put("subject", email.subject());
        node.put("transport", transport);
        node.put("templateVersion", email.templateVersion());
        var all = EmailRecipients.all(email);
        if (all.size() > 1) {
            ArrayNode list = node.putArray("recipients");
            for (EmailRecipients.Recipient r : all) {
                ObjectNode one = list.addObject().put("role", r.role().words()).put("address", r.address().address());
                if (r.address().displayName() != null) {
                    one.put("name", r.address().displayName());
                }
            }
        }
        if (!email.tags().isEmpty()) {
            ObjectNode tags = node.putObject("tags");
            email.tags().forEach(tags::put);
        }
        return node.toString();
    }
}
