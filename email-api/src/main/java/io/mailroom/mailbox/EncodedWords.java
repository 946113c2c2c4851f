package io.mailroom.mailbox;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.UnsupportedCharsetException;
import java.io.ByteArrayOutputStream;
import java.util.Base64;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Decodes RFC 2047 encoded words ({@code =?charset?B?...?=}, {@code =?charset?Q?...?=}) the way a
 * mail client would before it shows a header, so that {@link MailboxRules} can judge what the
 * reader will see, not the ASCII disguise: {@code =?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?=}
 * is {@code "Ann\r\nBcc: evil@example.net"} once decoded.
 *
 * <p>Written here rather than taken from Jakarta Mail's {@code MimeUtility} because the email API
 * depends on the outbox core and jOOQ only (business applications embed it). It decodes as
 * leniently as common parsers do (anywhere in the text, not only between spaces; B without its
 * padding; any charset the JVM knows, with an RFC 2231 {@code *language} suffix), because what
 * matters is what any reader might decode. What it cannot decode (an unknown charset, bytes that are
 * not valid in the charset, a malformed Q escape) is reported as undecodable, and refused by the
 * caller: a word we cannot read may read as anything elsewhere.
 */
final class EncodedWords {

    /** charset, encoding, text: RFC 2047's token and encoded-text, without the 75-character limit. */
    private static final Pattern WORD = Pattern.compile("=\\?([^?\\s]+)\\?([BbQq])\\?([^?\\s]*)\\?=");
    /** A decoded text that still holds encoded words is decoded again, at most this often. */
    private static final int MAX_DEPTH = 4;

    private EncodedWords() {
    }

    /** Thrown for an encoded word that cannot be decoded. */
    static final class Undecodable extends Exception {
        private static final long serialVersionUID = 1L;

        Undecodable(String message) {
            super(message, null, false, false);
        }
    }

    /** Whether {@code s} contains anything that looks like an encoded word. */
    static boolean contains(String s) {
        return s.contains("=?") && WORD.matcher(s).find();
    }

    /**
     * {@code s} with its encoded words decoded, repeatedly (a decoded word may hold another), at most
     * {@value #MAX_DEPTH} levels deep; {@code s} itself if it has none.
     */
    static String decode(String s) throws Undecodable {
        String current = s;
        for (int depth = 0; depth < MAX_DEPTH && contains(current); depth++) {
            current = decodeOnce(current);
        }
        if (contains(current)) {
            throw new Undecodable("has encoded words nested more than " + MAX_DEPTH + " levels deep");
        }
        return current;
    }

    private static String decodeOnce(String s) throws Undecodable {
        Matcher m = WORD.matcher(s);
        StringBuilder out = new StringBuilder(s.length());
        int last = 0;
        while (m.find()) {
            out.append(s, last, m.start());
            out.append(word(m.group(1), m.group(2), m.group(3)));
            last = m.end();
        }
        return out.append(s, last, s.length()).toString();
    }

    private static String word(String charsetName, String encoding, String text) throws Undecodable {
        int star = charsetName.indexOf('*'); // RFC 2231: charset*language
        String name = star >= 0 ? charsetName.substring(0, star) : charsetName;
        Charset charset;
        try {
            charset = Charset.forName(name);
        } catch (IllegalCharsetNameException | UnsupportedCharsetException e) {
            throw new Undecodable("has an RFC 2047 encoded word in charset '" + name + "', which is not known");
        }
        byte[] bytes = encoding.toUpperCase(Locale.ROOT).equals("B") ? base64(text) : quotedPrintable(text);
        try {
            return charset.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new Undecodable("has an RFC 2047 encoded word that is not valid " + charset.name());
        }
    }

    private static byte[] base64(String text) throws Undecodable {
        String padded = switch (text.length() % 4) {
            case 2 -> text + "==";
            case 3 -> text + "=";
            default -> text; // complete, or one character too many (malformed, refused below)
        };
        try {
            return Base64.getDecoder().decode(padded);
        } catch (IllegalArgumentException e) {
            throw new Undecodable("has an RFC 2047 encoded word whose base64 is malformed");
        }
    }

    private static byte[] quotedPrintable(String text) throws Undecodable {
        ByteArrayOutputStream out = new ByteArrayOutputStream(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '_') {
                out.write(' ');
            } else if (c == '=') {
                int hi = i + 2 < text.length() ? Character.digit(text.charAt(i + 1), 16) : -1;
                int lo = hi < 0 ? -1 : Character.digit(text.charAt(i + 2), 16);
                if (lo < 0) {
                    throw new Undecodable("has an RFC 2047 encoded word with a malformed '=XX' escape");
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toByteArray();
    }
}
