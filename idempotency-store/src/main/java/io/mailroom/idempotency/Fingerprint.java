package io.mailroom.idempotency;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * What a request for a business effect looked like, reduced to a SHA-256 digest, so that the same
 * effect key arriving with a different request is detected instead of silently treated as a repeat.
 *
 * <p>The caller decides which parts make up the request (for an email: recipient, subject, bodies,
 * template version) and passes them in a fixed order, already in canonical form; this type knows
 * nothing about what the parts mean. The encoding is unambiguous: a version tag, then for each part a
 * 4-byte big-endian length of its UTF-8 bytes (or {@code -1} for null) followed by those bytes. So
 * {@code ("ab", "c")}, {@code ("a", "bc")}, {@code ("abc")}, {@code ("abc", "")} and
 * {@code ("abc", null)} all differ.
 *
 * <p>Invariant: {@link #hex()} is always 64 lowercase hexadecimal characters.
 *
 * @param hex the digest as 64 lowercase hexadecimal characters
 */
public record Fingerprint(String hex) {

    /**
     * Prefix of every encoding. Changing the encoding would make every stored fingerprint mismatch
     * its retries, so a new scheme must get a new tag and be introduced deliberately.
     */
    private static final byte[] SCHEME = "mailroom-fingerprint-v1".getBytes(StandardCharsets.US_ASCII);
    private static final HexFormat HEX = HexFormat.of();

    public Fingerprint {
        if (hex == null || hex.length() != 64) {
            throw new IllegalArgumentException("hex must be 64 hexadecimal characters, got "
                    + (hex == null ? "null" : hex.length() + " characters"));
        }
        for (int i = 0; i < hex.length(); i++) {
            char c = hex.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                throw new IllegalArgumentException("hex must be lowercase hexadecimal, found '" + c + "' at " + i);
            }
        }
    }

    /**
     * The fingerprint of a request made of {@code parts}, in the order given. Null parts are allowed
     * and differ from empty ones. A part that is not valid Unicode (an unpaired surrogate) is
     * rejected: encoding it would replace the bad character and let different parts collide.
     */
    public static Fingerprint of(String... parts) {
        if (parts == null || parts.length == 0) {
            throw new IllegalArgumentException("parts must contain at least one part");
        }
        MessageDigest sha256 = sha256();
        sha256.update(SCHEME);
        ByteBuffer length = ByteBuffer.allocate(Integer.BYTES);
        for (int i = 0; i < parts.length; i++) {
            byte[] bytes = parts[i] == null ? null : utf8(parts[i], i);
            length.clear();
            length.putInt(bytes == null ? -1 : bytes.length);
            sha256.update(length.array());
            if (bytes != null) {
                sha256.update(bytes);
            }
        }
        return new Fingerprint(HEX.formatHex(sha256.digest()));
    }

    /**
     * The part's UTF-8 bytes. {@link String#getBytes} would write an unpaired surrogate as {@code ?},
     * so the part is checked for one first (a CharsetEncoder that reports it did both, at several
     * times the cost).
     */
    private static byte[] utf8(String part, int index) {
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < part.length() && Character.isLowSurrogate(part.charAt(i + 1))) {
                    i++;
                } else {
                    throw new IllegalArgumentException("parts[" + index + "] is not valid Unicode (unpaired surrogate at "
                            + i + ")");
                }
            }
        }
        return part.getBytes(StandardCharsets.UTF_8);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            // Every Java platform must provide SHA-256 (java.security.MessageDigest's contract).
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }

    @Override
    public String toString() {
        return hex;
    }
}
