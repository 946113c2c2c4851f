package io.mailroom.email.transport.smtp;

import jakarta.mail.MessagingException;
import jakarta.mail.internet.InternetHeaders;
import jakarta.mail.internet.MimeBodyPart;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * An email's text and HTML parts, their transfer encoding chosen and applied once, in one pass over
 * the bytes, with the result Jakarta Mail gives.
 *
 * <p>Left to itself, Jakarta Mail reads a text part twice per message: {@code saveChanges()} writes
 * it through a counting stream to choose its Content-Transfer-Encoding, and {@code writeTo} writes
 * it through Angus's quoted-printable stream, which takes the bytes one virtual call at a time
 * through every stream below it. Over SMTP the two were a quarter of the dispatcher's CPU per email
 * (BENCHMARKS.md, issue 28, "the text parts encoded once"). Here the choice is made on the UTF-8
 * bytes by the rules of {@code MimeUtility.getEncoding} (no non-ASCII byte and no line over 998
 * bytes: 7bit; more ASCII than not: quoted-printable; otherwise base64) and quoted-printable is
 * written by the rules of Angus's {@code QPEncoderStream} (76-character lines, a soft break as
 * {@code =} CRLF, a space or tab before a line end encoded, line ends as CRLF); the part is made
 * from those bytes with its headers, so Jakarta Mail writes them as they are.
 * {@code TextPartsTest} holds both to Jakarta Mail's own output, byte for byte.
 *
 * <p>A part that is mostly not ASCII goes to base64, which is left to Jakarta Mail.
 */
final class TextParts {

    /** What {@code MimeUtility.getEncoding} picks for a text part, and the header value it writes. */
    enum Encoding {
        SEVEN_BIT("7bit"), QUOTED_PRINTABLE("quoted-printable"), BASE64("base64");

        final String header;

        Encoding(String header) {
            this.header = header;
        }
    }

    /** The longest line without its CRLF that a 7bit part may have (RFC 5322's 998). */
    private static final int LONGEST_7BIT_LINE = 998;
    /** Characters on a quoted-printable line before the soft break's {@code =}: 76 less that one. */
    private static final int QP_LINE = 75;
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);

    private TextParts() {
    }

    /** A {@code text/<subtype>; charset=UTF-8} part holding {@code text}. */
    static MimeBodyPart of(String text, String subtype) throws MessagingException {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        Encoding encoding = encodingOf(utf8);
        if (encoding == Encoding.BASE64) {
            MimeBodyPart part = new MimeBodyPart();
            part.setText(text, StandardCharsets.UTF_8.name(), subtype);
            return part;
        }
        InternetHeaders headers = new InternetHeaders();
        headers.setHeader("Content-Type", "text/" + subtype + "; charset=UTF-8");
        headers.setHeader("Content-Transfer-Encoding", encoding.header);
        return new MimeBodyPart(headers, encoding == Encoding.SEVEN_BIT ? utf8 : quotedPrintable(utf8));
    }

    /** The transfer encoding {@code MimeUtility.getEncoding} chooses for a text part of these bytes. */
    static Encoding encodingOf(byte[] bytes) {
        int ascii = 0;
        int nonAscii = 0;
        int lineLength = 0;
        boolean longLine = false;
        for (byte value : bytes) {
            int b = value & 0xff;
            if (b == '\r' || b == '\n') {
                lineLength = 0;
            } else if (++lineLength > LONGEST_7BIT_LINE) {
                longLine = true;
            }
            if (b >= 0x7f || (b < 0x20 && b != '\r' && b != '\n' && b != '\t')) {
                nonAscii++;
            } else {
                ascii++;
            }
        }
        if (nonAscii == 0) {
            return longLine ? Encoding.QUOTED_PRINTABLE : Encoding.SEVEN_BIT;
        }
        return ascii > nonAscii ? Encoding.QUOTED_PRINTABLE : Encoding.BASE64;
    }

    /**
     * The bytes in quoted-printable as Angus writes them: a CR, an LF or a CRLF is a line end (CRLF);
     * {@code =}, controls (tab too) and bytes over 126 are {@code =XX}; a space stays as it is unless
     * a line end or the end follows it; a line reaching 76 characters is broken softly first.
     */
    static byte[] quotedPrintable(byte[] in) {
        byte[] out = new byte[in.length + in.length / 4 + 16];
        int n = 0;
        int count = 0; // characters on the current output line
        boolean gotSpace = false;
        boolean gotCR = false;
        for (byte value : in) {
            if (out.length - n < 16) {
                out = Arrays.copyOf(out, out.length * 2);
            }
            int c = value & 0xff;
            if (gotSpace) {
                boolean encode = c == '\r' || c == '\n';
                if ((count += encode ? 3 : 1) > QP_LINE) {
                    n = softBreak(out, n);
                    count = encode ? 3 : 1;
                }
                n = encode ? hex(out, n, ' ') : put(out, n, ' ');
                gotSpace = false;
            }
            if (c == '\r') {
                gotCR = true;
                out[n++] = '\r';
                out[n++] = '\n';
                count = 0;
                continue;
            }
            if (c == '\n') {
                if (!gotCR) {
                    out[n++] = '\r';
                    out[n++] = '\n';
                    count = 0;
                }
            } else if (c == ' ') {
                gotSpace = true;
            } else {
                boolean encode = c < 0x20 || c >= 0x7f || c == '=';
                if ((count += encode ? 3 : 1) > QP_LINE) {
                    n = softBreak(out, n);
                    count = encode ? 3 : 1;
                }
                n = encode ? hex(out, n, c) : put(out, n, c);
            }
            gotCR = false;
        }
        if (gotSpace) {
            if (out.length - n < 8) {
                out = Arrays.copyOf(out, out.length + 8);
            }
            if (count + 3 > QP_LINE) {
                n = softBreak(out, n);
            }
            n = hex(out, n, ' ');
        }
        return Arrays.copyOf(out, n);
    }

    private static int softBreak(byte[] out, int n) {
        out[n] = '=';
        out[n + 1] = '\r';
        out[n + 2] = '\n';
        return n + 3;
    }

    private static int hex(byte[] out, int n, int c) {
        out[n] = '=';
        out[n + 1] = HEX[c >> 4];
        out[n + 2] = HEX[c & 0xf];
        return n + 3;
    }

    private static int put(byte[] out, int n, int c) {
        out[n] = (byte) c;
        return n + 1;
    }
}
