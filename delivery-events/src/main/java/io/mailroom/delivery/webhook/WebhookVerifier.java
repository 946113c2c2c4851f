package io.mailroom.delivery.webhook;

import io.mailroom.delivery.DeliveryEventStore;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Verifies a webhook request by the Standard Webhooks scheme before anything reads its body: an
 * HMAC-SHA256, keyed by the source's secret, over {@code webhook-id + "." + webhook-timestamp + "." +
 * body}, base64, sent as one or more space-separated {@code v1,<signature>} entries in
 * {@code webhook-signature}. Svix, which signs Resend's webhooks among others, sends the same scheme
 * under {@code svix-id}, {@code svix-timestamp} and {@code svix-signature}; both spellings are read, and
 * a request that carries both passes if either set verifies.
 *
 * <p>Any one {@code v1} entry valid under any one configured secret passes (providers send several
 * while they rotate, and so may we). Signatures are compared in constant time. A timestamp more than
 * {@link #TOLERANCE} away from the injected clock, in either direction, is refused, so a captured
 * request cannot be replayed later; within the window a replay is caught by the webhook id.
 */
public final class WebhookVerifier {

    public static final Duration TOLERANCE = Duration.ofMinutes(5);
    /**
     * Signature entries read from one header: a provider sends one per secret in force (two while it
     * rotates); past this the header is refused before any HMAC, so it cannot buy CPU by the entry.
     */
    public static final int MAX_SIGNATURE_ENTRIES = 10;
    /** Characters of a signature header: room for {@link #MAX_SIGNATURE_ENTRIES} asymmetric {@code v1a} entries. */
    public static final int MAX_SIGNATURE_HEADER_LENGTH = 1024;
    private static final String[] PREFIXES = {"webhook-", "svix-"};

    private final Clock clock;
    private final Supplier<Mac> macs;

    public WebhookVerifier(Clock clock) {
        this(clock, WebhookVerifier::hmacSha256);
    }

    /** @param macs a new, uninitialised HmacSHA256 per call: a test counts the HMACs computed */
    WebhookVerifier(Clock clock, Supplier<Mac> macs) {
        this.clock = clock == null ? Clock.systemUTC() : clock;
        this.macs = Objects.requireNonNull(macs, "macs");
    }

    /** The answer: verified with the webhook id, or why not. */
    public sealed interface Result {
        /** The signature is valid and fresh; {@code webhookId} is the delivery's id. */
        record Verified(String webhookId, Instant timestamp) implements Result {
        }

        /** A required header is absent; names it. */
        record MissingHeader(String header) implements Result {
        }

        /** The timestamp is not a number of seconds. */
        record BadTimestamp(String value) implements Result {
        }

        /**
         * The timestamp is more than the tolerance away from now; kept in seconds, since a value
         * far enough out ({@code 100000000000000000}) is no {@link Instant} at all.
         */
        record Stale(long timestampSeconds, Instant now) implements Result {
        }

        /** A header is there but unacceptable before any signature is computed (too long, too many entries). */
        record BadHeader(String header, String problem) implements Result {
        }

        /** No {@code v1} signature matched any configured secret. */
        record NoValidSignature(int signaturesSeen) implements Result {
        }
    }

    /**
     * @param headers a case-insensitive header lookup (first value of the header, or null)
     * @param body    the raw request body, exactly as received
     */
    public Result verify(WebhookSecrets secrets, Function<String, String> headers, byte[] body) {
        Objects.requireNonNull(secrets, "secrets");
        Objects.requireNonNull(headers, "headers");
        Objects.requireNonNull(body, "body");
        // Both spellings may come in one request (a relay adding its own, a library sending both):
        // either set verifying is enough, as the Svix library, which reads only svix-*, would accept it.
        // Refused, the answer is the first set's reason.
        Result first = null;
        for (String prefix : PREFIXES) {
            String id = header(headers, prefix + "id");
            String timestamp = header(headers, prefix + "timestamp");
            String signatures = header(headers, prefix + "signature");
            if (id == null && timestamp == null && signatures == null) {
                continue;
            }
            Result r = verify(secrets, prefix, id, timestamp, signatures, body);
            if (r instanceof Result.Verified) {
                return r;
            }
            first = first == null ? r : first;
        }
        return first != null ? first : new Result.MissingHeader(PREFIXES[0] + "id");
    }

    private Result verify(WebhookSecrets secrets, String prefix, String id, String timestamp, String signatures, byte[] body) {
        if (id == null) {
            return new Result.MissingHeader(prefix + "id");
        }
        if (timestamp == null) {
            return new Result.MissingHeader(prefix + "timestamp");
        }
        if (signatures == null) {
            return new Result.MissingHeader(prefix + "signature");
        }
        if (id.length() > DeliveryEventStore.MAX_DELIVERY_ID) {
            return new Result.BadHeader(prefix + "id", "is longer than " + DeliveryEventStore.MAX_DELIVERY_ID + " characters");
        }
        if (signatures.length() > MAX_SIGNATURE_HEADER_LENGTH) {
            return new Result.BadHeader(prefix + "signature", "is longer than " + MAX_SIGNATURE_HEADER_LENGTH + " characters");
        }
        String[] entries = signatures.strip().split(" +");
        if (entries.length > MAX_SIGNATURE_ENTRIES) {
            return new Result.BadHeader(prefix + "signature", "has " + entries.length + " entries; at most "
                    + MAX_SIGNATURE_ENTRIES + " are read");
        }
        Long parsed = seconds(timestamp.strip());
        if (parsed == null) {
            return new Result.BadTimestamp(timestamp.length() > 40 ? timestamp.substring(0, 40) : timestamp);
        }
        long seconds = parsed;
        Instant now = clock.instant();
        // compared in seconds, without building an Instant or a Duration of the sender's number: either
        // overflows for a value like 100000000000000000, which is simply far from now
        long nowSeconds = now.getEpochSecond();
        if (seconds < nowSeconds - TOLERANCE.toSeconds() || seconds > nowSeconds + TOLERANCE.toSeconds()) {
            return new Result.Stale(seconds, now);
        }
        Instant sent = Instant.ofEpochSecond(seconds);
        byte[] signed = signedContent(id, timestamp.strip(), body);
        // one HMAC per secret, computed when the first v1 entry needs it, then compared with every entry
        byte[][] expected = new byte[secrets.keys().size()][];
        int seen = 0;
        for (String entry : entries) {
            int comma = entry.indexOf(',');
            if (comma < 0 || !entry.substring(0, comma).equals("v1")) {
                continue; // another scheme (v1a is asymmetric) or garbage: not ours to judge
            }
            seen++;
            byte[] given;
            try {
                given = Base64.getDecoder().decode(entry.substring(comma + 1));
            } catch (IllegalArgumentException e) {
                continue;
            }
            for (int k = 0; k < expected.length; k++) {
                if (expected[k] == null) {
                    expected[k] = hmac(macs.get(), secrets.keys().get(k), signed);
                }
                if (MessageDigest.isEqual(expected[k], given)) {
                    return new Result.Verified(id, sent);
                }
            }
        }
        return new Result.NoValidSignature(seen);
    }

    /** The {@code v1,<base64>} signature of a body: what a sender puts in {@code webhook-signature}. */
    public static String sign(WebhookSecrets secrets, String webhookId, long timestampSeconds, byte[] body) {
        return "v1," + Base64.getEncoder().encodeToString(
                hmac(hmacSha256(), secrets.keys().getFirst(), signedContent(webhookId, Long.toString(timestampSeconds), body)));
    }

    /** For a sender of signed requests (tests, tools): the three headers, by the spec's names. */
    public static Map<String, String> headers(WebhookSecrets secrets, String webhookId, long timestampSeconds, byte[] body) {
        return Map.of("webhook-id", webhookId, "webhook-timestamp", Long.toString(timestampSeconds),
                "webhook-signature", sign(secrets, webhookId, timestampSeconds, body));
    }

    private static String header(Function<String, String> headers, String name) {
        String value = headers.apply(name);
        return value == null || value.isBlank() ? null : value;
    }

    /** ASCII digits with an optional minus sign, as the spec's integer; null otherwise or past a long. */
    private static Long seconds(String text) {
        int start = text.startsWith("-") ? 1 : 0;
        if (text.length() == start || text.length() > 20) {
            return null;
        }
        for (int i = start; i < text.length(); i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return null; // Long.parseLong would take other scripts' digits (U+FF11) and a leading '+'
            }
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return null; // beyond a long
        }
    }

    private static byte[] signedContent(String id, String timestamp, byte[] body) {
        byte[] head = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }

    private static byte[] hmac(Mac mac, byte[] key, byte[] content) {
        try {
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(content);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 keys of any length are valid", e);
        }
    }

    private static Mac hmacSha256() {
        try {
            return Mac.getInstance("HmacSHA256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is required of every Java platform", e);
        }
    }
}
