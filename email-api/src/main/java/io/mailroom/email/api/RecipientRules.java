package io.mailroom.email.api;

import io.mailroom.mailbox.MailboxRules;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The limits on an email's recipients, checked at enqueue: at most {@value #MAX_TO} {@code to},
 * {@value #MAX_CC} {@code cc} and {@value #MAX_BCC} {@code bcc}, {@value #MAX_RECIPIENTS} in all
 * (one SMTP transaction; RFC 5321 asks servers to take at least 100 RCPT), each address and name
 * checked by {@link MailboxRules}, and no address twice across the three lists (compared as the
 * suppression list keys them, lower case): a duplicate would be one mailbox getting the email twice,
 * or a Bcc recipient shown in To.
 */
public final class RecipientRules {

    public static final int MAX_TO = 50;
    public static final int MAX_CC = 50;
    public static final int MAX_BCC = 50;
    public static final int MAX_RECIPIENTS = 100;

    private RecipientRules() {
    }

    /** Throws {@link InvalidEmailException} naming the field ({@code cc[1].address}) of the first problem. */
    static void check(List<OutgoingEmail.Mailbox> to, List<OutgoingEmail.Mailbox> cc, List<OutgoingEmail.Mailbox> bcc) {
        if (to.isEmpty()) {
            throw new InvalidEmailException("to", "is missing");
        }
        limit("to", to, MAX_TO);
        limit("cc", cc, MAX_CC);
        limit("bcc", bcc, MAX_BCC);
        int total = to.size() + cc.size() + bcc.size();
        if (total > MAX_RECIPIENTS) {
            throw new InvalidEmailException("to", "with cc and bcc makes " + total + " recipients; at most " + MAX_RECIPIENTS
                    + " in all");
        }
        Map<String, String> seen = new HashMap<>();
        // one to keeps its historic field name ("to.address"), as an email had before lists
        each(to.size() == 1 ? null : "to", to, seen);
        each("cc", cc, seen);
        each("bcc", bcc, seen);
    }

    private static void limit(String field, List<OutgoingEmail.Mailbox> list, int max) {
        if (list.size() > max) {
            throw new InvalidEmailException(field, "has " + list.size() + " addresses; at most " + max);
        }
    }

    private static void each(String list, List<OutgoingEmail.Mailbox> mailboxes, Map<String, String> seen) {
        for (int i = 0; i < mailboxes.size(); i++) {
            String field = list == null ? "to" : list + "[" + i + "]";
            OutgoingEmail.Mailbox m = mailboxes.get(i);
            mailbox(field, m);
            String earlier = seen.putIfAbsent(SearchTerms.normalize(m.address()), field);
            if (earlier != null) {
                throw new InvalidEmailException(field + ".address", "is already a recipient as " + earlier
                        + "; an address may appear once across to, cc and bcc");
            }
        }
    }

    static void mailbox(String field, OutgoingEmail.Mailbox m) {
        if (m == null) {
            throw new InvalidEmailException(field, "is missing");
        }
        MailboxRules.addressProblem(m.address()).ifPresent(p -> {
            throw new InvalidEmailException(field + ".address", p);
        });
        if (m.name() != null) {
            MailboxRules.displayNameProblem(m.name()).ifPresent(p -> {
                throw new InvalidEmailException(field + ".name", p);
            });
        }
    }
}
