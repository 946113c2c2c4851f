package io.mailroom.email.dispatch;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.delivery.Addresses;
import io.mailroom.delivery.suppression.Suppression;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.suppression.SuppressionPolicy;
import io.mailroom.email.Email;
import io.mailroom.email.EmailJson;
import io.mailroom.email.EmailRecipients;
import io.mailroom.outbox.admin.AuditTrail;
import org.jooq.DSLContext;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The suppression list applied to each recipient of an email. A suppressed Cc or Bcc, or one of
 * several To, is left out of the send, and the email's history says so ({@value #ACTION}, an audit
 * line support's timeline shows, written in the transaction that reserves the send); when every To
 * is suppressed the email is not sent at all, as an email to one suppressed recipient never was, even
 * if Cc or Bcc recipients remain: they were copied on a message to someone.
 */
final class RecipientSuppression {

    /** {@code audit_log.action} of a send that left out suppressed recipients. */
    static final String ACTION = "recipient_suppressed";

    private RecipientSuppression() {
    }

    /**
     * What the list says of one email.
     *
     * @param blocked  set when no To may get it: the suppression of its first To
     * @param sendable the email to send, without the dropped recipients (null when blocked)
     * @param dropped  the recipients left out, with their suppressions
     */
    record Verdict(Suppression blocked, Email sendable, List<Dropped> dropped) {
    }

    /** One recipient left out. */
    record Dropped(EmailRecipients.Recipient recipient, Suppression suppression) {
    }

    /** Every recipient of every email, normalised as the list keys them (one that cannot be keyed cannot be on it). */
    static Set<String> addresses(Collection<Email> emails) {
        Set<String> out = new HashSet<>();
        for (Email e : emails) {
            for (EmailRecipients.Recipient r : EmailRecipients.all(e)) {
                normalized(r).ifPresent(out::add);
            }
        }
        return out;
    }

    static Verdict judge(Email email, Map<String, List<Suppression>> active, SuppressionPolicy policy) {
        List<Dropped> dropped = new ArrayList<>();
        Set<String> out = new HashSet<>();
        for (EmailRecipients.Recipient r : EmailRecipients.all(email)) {
            Optional<String> address = normalized(r);
            Optional<Suppression> stop = address.flatMap(a -> SuppressionList.blocking(active.get(a), policy));
            if (stop.isPresent()) {
                dropped.add(new Dropped(r, stop.get()));
                out.add(address.get());
            }
        }
        Optional<Email> left = EmailRecipients.without(email, out);
        return left.map(e -> new Verdict(null, e, dropped))
                .orElseGet(() -> new Verdict(dropped.getFirst().suppression(), null, dropped));
    }

    /** The history line of a send that leaves {@code dropped} out; addresses masked in the words, whole in the detail. */
    static void record(DSLContext tx, String key, List<Dropped> dropped, String worker, Instant now) {
        List<String> words = new ArrayList<>();
        ObjectNode detail = EmailJson.mapper().createObjectNode();
        ArrayNode list = detail.putArray("dropped");
        for (Dropped d : dropped) {
            words.add(d.recipient().role().words() + " " + d.recipient().address().masked() + " " + d.suppression().failureReason());
            list.addObject().put("role", d.recipient().role().words()).put("address", d.recipient().address().address())
                    .put("reason", d.suppression().reason().name());
        }
        AuditTrail.write(tx, new AuditTrail.NewEntry(now, "dispatcher:" + worker, "dispatcher", ACTION, key,
                "left out of the send: " + String.join("; ", words) + "; the other recipients get the email", detail.toString()));
    }

    private static Optional<String> normalized(EmailRecipients.Recipient r) {
        try {
            return Optional.of(Addresses.normalize(r.address().address()));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
