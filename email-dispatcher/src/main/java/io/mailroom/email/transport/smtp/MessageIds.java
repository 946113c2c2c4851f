package io.mailroom.email.transport.smtp;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Derives the Message-ID of an email from its idempotency key, so every attempt of one business
 * effect carries the same id: {@code <email-order-102.1f2e3d4c5b6a7980@shop.example.com>}. SMTP has
 * no idempotency key; the stable id lets receiving systems (and support staff) recognise a
 * duplicate. The readable prefix is the key with anything outside {@code [A-Za-z0-9_-]} replaced,
 * cut to 64 characters; the SHA-256 prefix keeps distinct keys distinct after that cleaning.
 */
public final class MessageIds {

    private static final int READABLE_MAX = 64;

    private MessageIds() {
    }

    public static String forKey(String idempotencyKey, String domain) {
        StringBuilder readable = new StringBuilder(Math.min(idempotencyKey.length(), READABLE_MAX));
        for (int i = 0; i < idempotencyKey.length() && readable.length() < READABLE_MAX; i++) {
            char c = idempotencyKey.charAt(i);
            boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
            readable.append(plain ? c : '_');
        }
        return "<" + readable + "." + sha256Prefix(idempotencyKey) + "@" + domain + ">";
    }

    private static String sha256Prefix(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
