package io.mailroom.email;

import io.mailroom.email.api.Attachment;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * One rendered email, ready for any transport, valid by construction: strict addresses, a subject
 * and custom headers without control characters (no header injection), bodies without lone
 * surrogates or control characters other than line breaks and tabs. Only the body size limit is
 * configurable and therefore checked separately, by {@link #requireBodyWithin(long)}.
 *
 * <p>Custom headers may not replace the ones a transport owns (From, To, Subject, Message-ID,
 * Date, MIME and content headers, ...), and their values are printable ASCII.
 *
 * <p>{@code replyTo} is optional (null: replies go to {@code from}). {@code attachments} are files
 * and inline parts with their bytes, in the order the caller gave them (empty: none), already checked
 * by the email API at enqueue.
 *
 * <p>{@code to} is the first of {@code toList}, every To recipient; {@code cc} and {@code bcc} may be
 * empty (a transport names Bcc recipients in its envelope or API call only, never in a header). No
 * address appears twice across the three. {@code tags} are the email's {@code name=value} tags
 * ({@link io.mailroom.mailbox.TagRules}), which a transport sends in its own way
 * ({@link EmailRecipients}).
 *
 * <p>{@link #toString()} shows neither the bodies nor the full recipient address.
 */
public record Email(EmailAddress from, EmailAddress to, String subject, String textBody, String htmlBody,
                    Map<String, String> headers, String templateVersion, EmailAddress replyTo,
                    List<EmailAddress> toList, List<EmailAddress> cc, List<EmailAddress> bcc, Map<String, String> tags,
                    List<Attachment> attachments) {

    public static final long DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
    public static final int MAX_SUBJECT_LENGTH = 500;
    public static final int MAX_HEADER_VALUE_LENGTH = 900;

    private static final Pattern HEADER_NAME = Pattern.compile("[!-9;-~]{1,76}");
    private static final Pattern TEMPLATE_VERSION = Pattern.compile("[!-~]{1,100}");
    private static final Set<String> RESERVED_HEADERS = caseInsensitive(
            "from", "to", "cc", "bcc", "sender", "reply-to", "subject", "date", "message-id", "mime-version",
            "return-path", "received", "in-reply-to", "references", "dkim-signature", "content-type",
            "content-transfer-encoding", "content-disposition", "content-id", "content-description",
            EmailRecipients.TAG_HEADER);

    public Email {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (subject == null || subject.isBlank()) {
            throw new InvalidEmailException("subject", "is missing");
        }
        Text.headerProblem(subject).ifPresent(problem -> {
            throw new InvalidEmailException("subject", problem);
        });
        if (subject.length() > MAX_SUBJECT_LENGTH) {
            throw new InvalidEmailException("subject", "longer than " + MAX_SUBJECT_LENGTH + " characters");
        }
        checkBody("textBody", textBody);
        checkBody("htmlBody", htmlBody);
        headers = checkHeaders(headers == null ? Map.of() : headers);
        if (templateVersion == null || !TEMPLATE_VERSION.matcher(templateVersion).matches()) {
            throw new InvalidEmailException("templateVersion", "must be 1..100 printable ASCII characters");
        }
        toList = toList == null || toList.isEmpty() ? List.of(to) : List.copyOf(toList);
        if (!toList.getFirst().equals(to)) {
            throw new InvalidEmailException("to", "must be the first of toList");
        }
        cc = cc == null ? List.of() : List.copyOf(cc);
        bcc = bcc == null ? List.of() : List.copyOf(bcc);
        tags = EmailRecipients.checkedTags(tags);
        EmailRecipients.requireDistinct(toList, cc, bcc);
        attachments = attachments == null ? List.of() : List.copyOf(attachments);
    }

    /** An email to one recipient, without cc, bcc, tags or attachments. */
    public Email(EmailAddress from, EmailAddress to, String subject, String textBody, String htmlBody,
                 Map<String, String> headers, String templateVersion, EmailAddress replyTo) {
        this(from, to, subject, textBody, htmlBody, headers, templateVersion, replyTo, null, null, null, null, null);
    }

    /** An email to one recipient, with these attachments. */
    public Email(EmailAddress from, EmailAddress to, String subject, String textBody, String htmlBody,
                 Map<String, String> headers, String templateVersion, EmailAddress replyTo, List<Attachment> attachments) {
        this(from, to, subject, textBody, htmlBody, headers, templateVersion, replyTo, null, null, null, null, attachments);
    }

    /** This email to these recipients, with these tags ({@code toList} not empty). */
    public Email withRecipients(List<EmailAddress> toList, List<EmailAddress> cc, List<EmailAddress> bcc,
                                Map<String, String> tags) {
        return new Email(from, toList.getFirst(), subject, textBody, htmlBody, headers, templateVersion, replyTo, toList, cc, bcc,
                tags, attachments);
    }

    /** An email without a Reply-To: replies go to {@code from}. */
    public Email(EmailAddress from, EmailAddress to, String subject, String textBody, String htmlBody,
                 Map<String, String> headers, String templateVersion) {
        this(from, to, subject, textBody, htmlBody, headers, templateVersion, null);
    }

    /**
     * The rendered email's identity: recipient, subject, bodies and template version. Not what the
     * dispatcher fingerprints for idempotency (that is the request, see
     * {@code EmailComposer.Composed#fingerprintParts()}): the rendering changes with every template deploy.
     */
    public List<String> fingerprintParts() {
        return List.of(to.address(), subject, textBody, htmlBody, templateVersion);
    }

    /** UTF-8 size of both bodies together. */
    public long bodyBytes() {
        return utf8Length(textBody) + utf8Length(htmlBody);
    }

    /**
     * What {@code s.getBytes(UTF_8).length} is, counted without encoding: a pair of surrogates is 4
     * bytes, and a lone one the single byte of the {@code ?} the JDK puts in its place.
     */
    static long utf8Length(String s) {
        long n = 0;
        int length = s.length();
        for (int i = 0; i < length; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                n++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /** Throws {@link InvalidEmailException} (field {@code body}) if the bodies exceed {@code maxBytes} in UTF-8. */
    public Email requireBodyWithin(long maxBytes) {
        long size = bodyBytes();
        if (size > maxBytes) {
            throw new InvalidEmailException("body", "text and HTML bodies are " + size + " bytes, the limit is " + maxBytes);
        }
        return this;
    }

    @Override
    public String toString() {
        return "Email[to=" + to.masked() + (toList.size() + cc.size() + bcc.size() > 1
                ? " +" + (toList.size() + cc.size() + bcc.size() - 1) : "") + ", template=" + templateVersion + ", subjectChars=" + subject.length()
                + ", textChars=" + textBody.length() + ", htmlChars=" + htmlBody.length()
                + (attachments.isEmpty() ? "" : ", attachments=" + attachments.size()) + "]";
    }

    private static void checkBody(String field, String body) {
        if (body == null || body.isBlank()) {
            throw new InvalidEmailException(field, "is missing");
        }
        int bad = Text.firstForbiddenInBody(body);
        if (bad >= 0) {
            throw new InvalidEmailException(field, "contains " + Text.describe(body, bad));
        }
    }

    private static Map<String, String> checkHeaders(Map<String, String> headers) {
        Map<String, String> copy = new LinkedHashMap<>();
        Set<String> seen = caseInsensitive();
        headers.forEach((name, value) -> {
            if (name == null || !HEADER_NAME.matcher(name).matches()) {
                throw new InvalidEmailException("headers", "header name must be 1..76 printable ASCII characters without ':'");
            }
            if (RESERVED_HEADERS.contains(name)) {
                throw new InvalidEmailException("headers." + name, "is set by the transport and cannot be overridden");
            }
            if (!seen.add(name)) {
                throw new InvalidEmailException("headers." + name, "appears twice");
            }
            if (value == null || value.isBlank() || value.length() > MAX_HEADER_VALUE_LENGTH) {
                throw new InvalidEmailException("headers." + name, "value must be 1.." + MAX_HEADER_VALUE_LENGTH + " characters");
            }
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (c < 0x20 || c > 0x7E) {
                    throw new InvalidEmailException("headers." + name, "value must be printable ASCII, found U+"
                            + String.format(Locale.ROOT, "%04X", (int) c) + " at index " + i);
                }
            }
            Text.headerProblem(value).ifPresent(problem -> {
                throw new InvalidEmailException("headers." + name, "value " + problem);
            });
            copy.put(name, value);
        });
        return Collections.unmodifiableMap(copy);
    }

    private static Set<String> caseInsensitive(String... names) {
        Set<String> set = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        set.addAll(List.of(names));
        return set;
    }
}
