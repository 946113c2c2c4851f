package io.mailroom.email.render;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.email.EmailAddress;
import io.mailroom.mailbox.TagRules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The recipients and tags of a version 2 envelope ({@code "to":[..],"cc":[..],"bcc":[..],"tags":{..}}),
 * read with the rules the email API wrote them by, and what they add to the fingerprint. A version 1
 * envelope has one {@code to} and none of the others.
 */
record EnvelopeRecipients(List<EmailAddress> to, List<EmailAddress> cc, List<EmailAddress> bcc, Map<String, String> tags) {

    /** Far above the email API's limits (100 in all): a bigger list is not an envelope it wrote. */
    private static final int MAX_LIST = 100;

    static EnvelopeRecipients v2(JsonNode envelope) throws RenderException {
        List<EmailAddress> to = list(envelope, "to", true);
        List<EmailAddress> cc = list(envelope, "cc", false);
        List<EmailAddress> bcc = list(envelope, "bcc", false);
        Map<String, String> tags = new LinkedHashMap<>();
        JsonNode node = envelope.get("tags");
        if (node != null && !node.isNull()) {
            if (!node.isObject()) {
                throw new RenderException("payload.tags", "must be an object of tag names to values");
            }
            for (Map.Entry<String, JsonNode> t : node.properties()) {
                if (!t.getValue().isTextual()) {
                    throw new RenderException("payload.tags." + t.getKey(), "must be a string");
                }
                tags.put(t.getKey(), t.getValue().textValue());
            }
            String[] problem = TagRules.problem(tags).orElse(null);
            if (problem != null) {
                throw new RenderException("payload." + problem[0], problem[1]);
            }
        }
        // in name order: the queue's jsonb keeps no key order, and a send should not depend on its storage
        return new EnvelopeRecipients(to, cc, bcc, new LinkedHashMap<>(new TreeMap<>(tags)));
    }

    private static List<EmailAddress> list(JsonNode envelope, String field, boolean required) throws RenderException {
        JsonNode node = envelope.get(field);
        if (node == null || node.isNull()) {
            if (required) {
                throw new RenderException("payload." + field, "is missing");
            }
            return List.of();
        }
        if (!node.isArray() || (required && node.isEmpty()) || node.size() > MAX_LIST) {
            throw new RenderException("payload." + field, "must be an array of 1.." + MAX_LIST + " mailboxes in envelope v2");
        }
        List<EmailAddress> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            out.add(TemplatedComposer.mailbox(field + "[" + i + "]", node.get(i)));
        }
        return out;
    }

    /**
     * The recipients and tags as the fingerprint holds them: each list in order, {@code address name}
     * per mailbox, and the tags in name order, so the same request always gives the same parts and
     * another recipient or tag another fingerprint.
     */
    List<String> fingerprintParts() {
        return List.of(mailboxes(to), mailboxes(cc), mailboxes(bcc), new TreeMap<>(tags).toString());
    }

    private static String mailboxes(List<EmailAddress> list) {
        StringBuilder out = new StringBuilder();
        for (EmailAddress a : list) {
            out.append(a.address()).append(' ').append(Objects.toString(a.displayName(), "")).append('\n');
        }
        return out.toString();
    }
}
