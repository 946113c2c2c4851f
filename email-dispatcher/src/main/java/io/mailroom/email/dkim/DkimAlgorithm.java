package io.mailroom.email.dkim;

import java.util.Locale;

/**
 * The two signing algorithms receivers verify today: {@code rsa-sha256} (RFC 6376; every verifier)
 * and {@code ed25519-sha256} (RFC 8463; Gmail and dkimpy verify it, some receivers still ignore it,
 * so a domain that uses it usually publishes an RSA selector beside it).
 */
public enum DkimAlgorithm {

    RSA_SHA256("rsa-sha256", "rsa", "RSA", "SHA256withRSA"),
    ED25519_SHA256("ed25519-sha256", "ed25519", "Ed25519", "Ed25519");

    private final String tag;
    private final String keyType;
    private final String jcaKey;
    private final String jcaSignature;

    DkimAlgorithm(String tag, String keyType, String jcaKey, String jcaSignature) {
        this.tag = tag;
        this.keyType = keyType;
        this.jcaKey = jcaKey;
        this.jcaSignature = jcaSignature;
    }

    /** The {@code a=} value of the signature. */
    public String tag() {
        return tag;
    }

    /** The {@code k=} value of the DNS key record. */
    public String keyType() {
        return keyType;
    }

    /** The JCA KeyFactory algorithm. */
    String jcaKey() {
        return jcaKey;
    }

    /** The JCA Signature algorithm; Ed25519 signs the SHA-256 of the data (RFC 8463 §3), not the data. */
    String jcaSignature() {
        return jcaSignature;
    }

    /** {@code rsa-sha256}, {@code ed25519-sha256}, or the short {@code rsa}, {@code ed25519}; null when neither. */
    public static DkimAlgorithm parse(String text) {
        String t = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
        for (DkimAlgorithm a : values()) {
            if (a.tag.equals(t) || a.keyType.equals(t)) {
                return a;
            }
        }
        return null;
    }
}
