package io.mailroom.delivery.webhook;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * The signing secrets of one webhook source, in the Standard Webhooks form {@code whsec_<base64>}.
 * Several may be in force at once, so a secret can be rotated without a window in which the
 * provider's requests are refused: configure the new one beside the old, switch the provider, then
 * drop the old. The key bytes are never printed; {@link #toString()} shows only how many there are.
 */
public final class WebhookSecrets {

    static final String PREFIX = "whsec_";
    /** HMAC-SHA256 keys shorter than this are guessable; the spec's own generators use 24 bytes or more. */
    static final int MIN_KEY_BYTES = 16;

    private final List<byte[]> keys;

    private WebhookSecrets(List<byte[]> keys) {
        this.keys = keys;
    }

    /**
     * @param name    what the secrets are for, named in errors ({@code MAILROOM_WEBHOOK_SECRETS source resend})
     * @param secrets one or more {@code whsec_<base64>} values
     * @throws IllegalArgumentException naming the setting and the position of a bad secret, never its value
     */
    public static WebhookSecrets of(String name, List<String> secrets) {
        Objects.requireNonNull(name, "name");
        if (secrets == null || secrets.isEmpty()) {
            throw new IllegalArgumentException(name + ": at least one secret is required");
        }
        List<byte[]> keys = new ArrayList<>(secrets.size());
        for (int i = 0; i < secrets.size(); i++) {
            String s = secrets.get(i) == null ? "" : secrets.get(i).strip();
            if (!s.startsWith(PREFIX)) {
                throw new IllegalArgumentException(name + ": secret " + (i + 1) + " of " + secrets.size()
                        + " does not start with " + PREFIX + " (the Standard Webhooks form whsec_<base64>)");
            }
            byte[] key;
            try {
                key = Base64.getDecoder().decode(s.substring(PREFIX.length()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name + ": secret " + (i + 1) + " of " + secrets.size()
                        + " is not valid base64 after " + PREFIX);
            }
            if (key.length < MIN_KEY_BYTES) {
                throw new IllegalArgumentException(name + ": secret " + (i + 1) + " of " + secrets.size() + " is "
                        + key.length + " bytes; at least " + MIN_KEY_BYTES + " are required");
            }
            keys.add(key);
        }
        return new WebhookSecrets(List.copyOf(keys));
    }

    List<byte[]> keys() {
        return keys;
    }

    public int size() {
        return keys.size();
    }

    @Override
    public String toString() {
        return keys.size() + " secret(s), masked";
    }
}
