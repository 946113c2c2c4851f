package io.mailroom.email.transport.smtp;

import io.mailroom.outbox.InvalidSettingException;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A VERP return path ({@code MAILROOM_SMTP_VERP}, e.g. {@code bounces+{key}@shop.example}): each
 * send's envelope sender carries the email's idempotency key, so a bounce delivered to that address
 * names the email even when the returned message or its Message-ID is missing.
 *
 * <p>The key goes into the local part as RFC 4648 base32, lower case, without padding. Any key
 * survives (the alphabet is {@code a-z2-7}, allowed in a dot-atom), and so does a mail server that
 * changes the case of the local part, which hex would too but at twice the length instead of 1.6
 * times. RFC 5321 limits a local part to 64 octets: a key too long for that is sent from the plain
 * address (the template with {@code +{key}} removed) and its bounce is matched by Message-ID alone.
 */
public final class Verp {

    public static final String PLACEHOLDER = "{key}";
    static final int MAX_LOCAL_PART = 64;

    private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();
    private static final Pattern ATOM_TEXT = Pattern.compile("[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]*");

    private final String prefix;
    private final String suffix;
    private final String domain;
    private final String plain;

    private Verp(String prefix, String suffix, String domain, String plain) {
        this.prefix = prefix;
        this.suffix = suffix;
        this.domain = domain;
        this.plain = plain;
    }

    /**
     * @param template an address whose local part holds {@value #PLACEHOLDER} once
     * @throws InvalidSettingException naming {@code MAILROOM_SMTP_VERP} when it does not
     */
    public static Verp parse(String template) {
        String setting = "MAILROOM_SMTP_VERP";
        if (template == null || template.isBlank()) {
            throw new InvalidSettingException(setting, setting + " is empty");
        }
        String t = template.strip();
        int at = t.lastIndexOf('@');
        int key = t.indexOf(PLACEHOLDER);
        if (at <= 0 || at == t.length() - 1 || key < 0 || key > at || t.indexOf(PLACEHOLDER, key + 1) >= 0) {
            throw new InvalidSettingException(setting, setting + " must be an address with " + PLACEHOLDER
                    + " once in its local part, such as bounces+" + PLACEHOLDER + "@shop.example; got '" + template + "'");
        }
        String prefix = t.substring(0, key);
        String suffix = t.substring(key + PLACEHOLDER.length(), at);
        String domain = t.substring(at + 1).toLowerCase(Locale.ROOT);
        if (!ATOM_TEXT.matcher(prefix + suffix).matches() || !domain.matches("[a-z0-9.-]+")) {
            throw new InvalidSettingException(setting, setting + " must be a plain ASCII address (dot-atom local part); got '" + template + "'");
        }
        // The address without the key: the '+' or '-' that would join the key goes with it.
        String plainLocal = prefix.replaceAll("[+=-]$", "") + suffix;
        if (plainLocal.isEmpty()) {
            throw new InvalidSettingException(setting, setting + " needs a local part besides " + PLACEHOLDER + "; got '" + template + "'");
        }
        return new Verp(prefix, suffix, domain, plainLocal + "@" + domain);
    }

    /** The envelope sender for this key; the plain address when the encoded key would not fit. */
    public String addressFor(String idempotencyKey) {
        String local = prefix + encode(idempotencyKey) + suffix;
        if (local.length() > MAX_LOCAL_PART) {
            return plain;
        }
        return local + "@" + domain;
    }

    /** The plain return path, for keys too long to carry. */
    public String plainAddress() {
        return plain;
    }

    /**
     * @return the idempotency key the address carries, or null when it is not one of ours (another
     * domain, another prefix, or not base32)
     */
    public String keyOf(String address) {
        if (address == null) {
            return null;
        }
        String a = address.strip();
        if (a.startsWith("<") && a.endsWith(">")) {
            a = a.substring(1, a.length() - 1);
        }
        int at = a.lastIndexOf('@');
        if (at <= 0 || !a.substring(at + 1).equalsIgnoreCase(domain)) {
            return null;
        }
        String local = a.substring(0, at);
        if (local.length() < prefix.length() + suffix.length()
                || !local.regionMatches(true, 0, prefix, 0, prefix.length())
                || !local.regionMatches(true, local.length() - suffix.length(), suffix, 0, suffix.length())) {
            return null;
        }
        return decode(local.substring(prefix.length(), local.length() - suffix.length()));
    }

    static String encode(String key) {
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder((bytes.length * 8 + 4) / 5);
        int buffer = 0;
        int bits = 0;
        for (byte b : bytes) {
            buffer = (buffer << 8) | (b & 0xff);
            bits += 8;
            while (bits >= 5) {
                out.append(ALPHABET[(buffer >> (bits - 5)) & 31]);
                bits -= 5;
            }
        }
        if (bits > 0) {
            out.append(ALPHABET[(buffer << (5 - bits)) & 31]);
        }
        return out.toString();
    }

    /** @return the decoded key, or null when {@code text} is not unpadded base32 of UTF-8 */
    static String decode(String text) {
        if (text.isEmpty()) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(text.length() * 5 / 8);
        int buffer = 0;
        int bits = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = Character.toLowerCase(text.charAt(i));
            int v = c >= 'a' && c <= 'z' ? c - 'a' : c >= '2' && c <= '7' ? c - '2' + 26 : -1;
            if (v < 0) {
                return null;
            }
            buffer = (buffer << 5) | v;
            bits += 5;
            if (bits >= 8) {
                out.write((buffer >> (bits - 8)) & 0xff);
                bits -= 8;
            }
        }
        // Leftover bits are padding from the encoder: fewer than 5 and all zero, else not ours.
        if (bits >= 5 || (buffer & ((1 << bits) - 1)) != 0) {
            return null;
        }
        byte[] bytes = out.toByteArray();
        String key = new String(bytes, StandardCharsets.UTF_8);
        return java.util.Arrays.equals(key.getBytes(StandardCharsets.UTF_8), bytes) ? key : null;
    }

    @Override
    public String toString() {
        return prefix + PLACEHOLDER + suffix + "@" + domain;
    }
}
