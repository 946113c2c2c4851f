package io.mailroom.email;

import io.mailroom.mailbox.TagRules;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * An email's recipients by role, and its tags, as the dispatcher handles them: the rules
 * {@link Email} keeps (no address twice, tags by {@link TagRules}), the list every recipient is
 * looked up on the suppression list from, and the email without those who must not get it.
 *
 * <p>Tags go over SMTP as one {@value #TAG_HEADER} header per tag, {@code name=value} (the charset
 * of {@link TagRules} needs no encoding in a header), and to an HTTP provider in its own format.
 */
public final class EmailRecipients {

    /** The SMTP header that carries one tag: {@code X-Mailroom-Tag: category=invoice}. */
    public static final String TAG_HEADER = "X-Mailroom-Tag";

    /** To, Cc or Bcc. */
    public enum Role {
        TO, CC, BCC;

        public String words() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** One recipient of an email, in its role. */
    public record Recipient(Role role, EmailAddress address) {
    }

    private EmailRecipients() {
    }

    /** Every recipient, To first, then Cc, then Bcc. */
    public static List<Recipient> all(Email email) {
        List<Recipient> out = new ArrayList<>(email.toList().size() + email.cc().size() + email.bcc().size());
        email.toList().forEach(a -> out.add(new Recipient(Role.TO, a)));
        email.cc().forEach(a -> out.add(new Recipient(Role.CC, a)));
        email.bcc().forEach(a -> out.add(new Recipient(Role.BCC, a)));
        return out;
    }

    /**
     * The email without the recipients whose (normalised) address is in {@code dropped}; empty when
     * that would leave no To: then the email cannot go at all.
     */
    public static Optional<Email> without(Email email, Set<String> dropped) {
        if (dropped.isEmpty()) {
            return Optional.of(email);
        }
        List<EmailAddress> to = keep(email.toList(), dropped);
        if (to.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(email.withRecipients(to, keep(email.cc(), dropped), keep(email.bcc(), dropped), email.tags()));
    }

    private static List<EmailAddress> keep(List<EmailAddress> list, Set<String> dropped) {
        return list.stream().filter(a -> !dropped.contains(a.address().toLowerCase(java.util.Locale.ROOT))).toList();
    }

    static Map<String, String> checkedTags(Map<String, String> tags) {
        if (tags == null || tags.isEmpty()) {
            return Map.of();
        }
        Map<String, String> copy = new LinkedHashMap<>(tags);
        TagRules.problem(copy).ifPresent(p -> {
            throw new InvalidEmailException(p[0], p[1]);
        });
        return Collections.unmodifiableMap(copy);
    }

    static void requireDistinct(List<EmailAddress> to, List<EmailAddress> cc, List<EmailAddress> bcc) {
        Map<String, String> seen = new HashMap<>();
        for (Map.Entry<String, List<EmailAddress>> list : List.of(Map.entry("to", to), Map.entry("cc", cc), Map.entry("bcc", bcc))) {
            for (int i = 0; i < list.getValue().size(); i++) {
                String field = list.getKey() + "[" + i + "]";
                String earlier = seen.putIfAbsent(list.getValue().get(i).address().toLowerCase(java.util.Locale.ROOT), field);
                if (earlier != null) {
                    throw new InvalidEmailException(field, "is already a recipient as " + earlier);
                }
            }
        }
    }
}
