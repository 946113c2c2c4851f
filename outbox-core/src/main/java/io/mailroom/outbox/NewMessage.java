package io.mailroom.outbox;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A message to add to the outbox beside the caller's business rows.
 *
 * @param topic          what kind of work this is, e.g. {@code email.order_confirmation}; selects the handler
 * @param aggregateType  the business entity it belongs to, e.g. {@code order}
 * @param aggregateId    that entity's id, e.g. {@code 102}
 * @param idempotencyKey the business effect, stable across retries, e.g. {@code email-order-102}; unique
 * @param orderingKey    optional: messages with the same key are handled one at a time, in id order
 * @param payloadJson    the payload as a JSON document (stored as {@code jsonb})
 * @param availableAt    optional: not before this instant (null means at once)
 * @param maxAttempts    how many attempts before the message fails for good
 * @param searchTerms    what support may find the effect by, kept with the history: {@code name:value}
 *                       terms such as {@code to:ann@example.com} (at most {@value #MAX_TERMS}, each at most
 *                       {@value #MAX_TERM_LENGTH} characters, the name lower-case letters, digits, '_' and '-')
 */
public record NewMessage(String topic, String aggregateType, String aggregateId, String idempotencyKey,
                         String orderingKey, String payloadJson, Instant availableAt, int maxAttempts,
                         List<String> searchTerms) {

    public static final int DEFAULT_MAX_ATTEMPTS = 10;
    public static final int MAX_KEY_LENGTH = 200;

    /** An email with 100 recipients (a to: and a domain: term each), its template and 10 tags fits. */
    public static final int MAX_TERMS = 256;
    public static final int MAX_TERM_LENGTH = 340;
    private static final Pattern TERM = Pattern.compile("^[a-z][a-z0-9_-]{0,31}:.+$", Pattern.DOTALL);

    public NewMessage {
        requireText("topic", topic, MAX_KEY_LENGTH);
        requireText("aggregateType", aggregateType, MAX_KEY_LENGTH);
        requireText("aggregateId", aggregateId, MAX_KEY_LENGTH);
        requireText("idempotencyKey", idempotencyKey, MAX_KEY_LENGTH);
        if (orderingKey != null) {
            requireText("orderingKey", orderingKey, MAX_KEY_LENGTH);
        }
        Objects.requireNonNull(payloadJson, "payloadJson must not be null");
        if (payloadJson.isBlank()) {
            throw new IllegalArgumentException("payloadJson must be a JSON document, got a blank string");
        }
        requireStorable("payloadJson", payloadJson);
        if (maxAttempts < 1 || maxAttempts > 1000) {
            throw new IllegalArgumentException("maxAttempts must be between 1 and 1000, got " + maxAttempts);
        }
        searchTerms = searchTerms == null ? List.of() : List.copyOf(new java.util.LinkedHashSet<>(searchTerms));
        if (searchTerms.size() > MAX_TERMS) {
            throw new IllegalArgumentException("searchTerms must be at most " + MAX_TERMS + ", got " + searchTerms.size());
        }
        for (String term : searchTerms) {
            requireText("searchTerms", term, MAX_TERM_LENGTH);
            if (!TERM.matcher(term).matches()) {
                throw new IllegalArgumentException("searchTerms must each be name:value with a name of 1-32 of a-z, 0-9, '_', '-'"
                        + " starting with a letter, got '" + term + "'");
            }
        }
    }

    /** A message without search terms. */
    public NewMessage(String topic, String aggregateType, String aggregateId, String idempotencyKey,
                      String orderingKey, String payloadJson, Instant availableAt, int maxAttempts) {
        this(topic, aggregateType, aggregateId, idempotencyKey, orderingKey, payloadJson, availableAt, maxAttempts, List.of());
    }

    /** A message available at once, with {@link #DEFAULT_MAX_ATTEMPTS} attempts and no ordering key. */
    public static NewMessage of(String topic, String aggregateType, String aggregateId, String idempotencyKey,
                                String payloadJson) {
        return new NewMessage(topic, aggregateType, aggregateId, idempotencyKey, null, payloadJson, null,
                DEFAULT_MAX_ATTEMPTS);
    }

    public NewMessage withOrderingKey(String key) {
        return new NewMessage(topic, aggregateType, aggregateId, idempotencyKey, key, payloadJson, availableAt, maxAttempts,
                searchTerms);
    }

    public NewMessage withAvailableAt(Instant at) {
        return new NewMessage(topic, aggregateType, aggregateId, idempotencyKey, orderingKey, payloadJson, at, maxAttempts,
                searchTerms);
    }

    public NewMessage withMaxAttempts(int attempts) {
        return new NewMessage(topic, aggregateType, aggregateId, idempotencyKey, orderingKey, payloadJson, availableAt, attempts,
                searchTerms);
    }

    public NewMessage withSearchTerms(List<String> terms) {
        return new NewMessage(topic, aggregateType, aggregateId, idempotencyKey, orderingKey, payloadJson, availableAt,
                maxAttempts, terms);
    }

    private static void requireText(String name, String value, int maxLength) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " must not be blank");
        }
        if (value.length() > maxLength) {
            throw new IllegalArgumentException(name + " must be at most " + maxLength + " characters, got " + value.length());
        }
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new IllegalArgumentException(name + " must not contain control characters");
            }
        }
        requireStorable(name, value);
    }

    /**
     * Refuses text PostgreSQL cannot store as given: U+0000 (text cannot hold it; the server refuses
     * it) and an unpaired UTF-16 surrogate (the driver would encode it as '?' and store a different
     * text without a word, so two keys could become one).
     */
    private static void requireStorable(String name, String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == 0) {
                throw new IllegalArgumentException(name + " contains U+0000 at index " + i + ", which PostgreSQL text cannot hold");
            }
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(name + " contains an unpaired surrogate U+"
                        + Integer.toHexString(c).toUpperCase(java.util.Locale.ROOT) + " at index " + i + ": not valid Unicode");
            }
        }
    }
}
