package io.mailroom.email.dkim;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * RFC 6376 §3.4.2 and §3.4.4, the "relaxed" header and body canonicalizations, on the message's
 * bytes exactly as they will be written. Header fields are read as ISO-8859-1 so that every byte
 * survives as one char (Jakarta Mail writes headers as ASCII, RFC 2047-encoded; a stray 8-bit byte
 * is still signed as it is sent). Only CRLF ends a line; whitespace is SP and HTAB.
 */
final class RelaxedCanonicalization {

    private RelaxedCanonicalization() {
    }

    /** One header field as it stands in the message, folding and final CRLF included. */
    record Field(String name, String raw) {
    }

    /** Where the header ends: the index of the body's first byte, or -1 when the message has no empty line. */
    static int bodyStart(byte[] message) {
        if (message.length >= 2 && message[0] == '\r' && message[1] == '\n') {
            return 2;
        }
        for (int i = 0; i + 3 < message.length; i++) {
            if (message[i] == '\r' && message[i + 1] == '\n' && message[i + 2] == '\r' && message[i + 3] == '\n') {
                return i + 4;
            }
        }
        return -1;
    }

    /** The header fields in order; a line that starts with SP or HTAB continues the field before it. */
    static List<Field> fields(byte[] message, int bodyStart) {
        int end = bodyStart - 2; // the header block without the empty line's CRLF
        String header = new String(message, 0, end, StandardCharsets.ISO_8859_1);
        List<Field> fields = new ArrayList<>();
        StringBuilder current = null;
        int pos = 0;
        while (pos < header.length()) {
            int eol = header.indexOf("\r\n", pos);
            int next = eol < 0 ? header.length() : eol + 2;
            String line = header.substring(pos, next);
            boolean continuation = !line.isEmpty() && (line.charAt(0) == ' ' || line.charAt(0) == '\t');
            if (continuation && current != null) {
                current.append(line);
            } else {
                if (current != null) {
                    fields.add(field(current.toString()));
                }
                current = new StringBuilder(line);
            }
            pos = next;
        }
        if (current != null) {
            fields.add(field(current.toString()));
        }
        return fields;
    }

    private static Field field(String raw) {
        int colon = raw.indexOf(':');
        String name = colon < 0 ? raw.strip() : raw.substring(0, colon);
        return new Field(name.strip(), raw.endsWith("\r\n") ? raw : raw + "\r\n");
    }

    /**
     * §3.4.2: the name in lower case, the value unfolded, whitespace runs as one SP, no whitespace
     * around the colon or at the end, then CRLF.
     */
    static String header(String rawField) {
        int colon = rawField.indexOf(':');
        String name = rawField.substring(0, colon).strip().toLowerCase(Locale.ROOT);
        String value = rawField.substring(colon + 1).replace("\r\n", "");
        StringBuilder out = new StringBuilder(name.length() + value.length() + 3).append(name).append(':');
        boolean pendingSpace = false;
        boolean started = false;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == ' ' || c == '\t') {
                pendingSpace = started;
                continue;
            }
            if (pendingSpace) {
                out.append(' ');
                pendingSpace = false;
            }
            out.append(c);
            started = true;
        }
        return out.append("\r\n").toString();
    }

    /**
     * §3.4.4: in every line, whitespace runs as one SP and none at the end; empty lines at the end
     * removed; a non-empty body ends with CRLF. An empty body stays empty.
     */
    static byte[] body(byte[] message, int bodyStart) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(16, message.length - bodyStart));
        int pendingEmptyLines = 0;
        int pos = bodyStart;
        while (pos < message.length) {
            int eol = indexOfCrlf(message, pos);
            int lineEnd = eol < 0 ? message.length : eol;
            ByteArrayOutputStream line = new ByteArrayOutputStream(lineEnd - pos);
            boolean pendingSpace = false;
            for (int i = pos; i < lineEnd; i++) {
                byte b = message[i];
                if (b == ' ' || b == '\t') {
                    pendingSpace = true;
                    continue;
                }
                if (pendingSpace) {
                    line.write(' ');
                    pendingSpace = false;
                }
                line.write(b);
            }
            // trailing whitespace of the line is dropped by never writing the pending space
            if (line.size() == 0) {
                pendingEmptyLines++;
            } else {
                for (; pendingEmptyLines > 0; pendingEmptyLines--) {
                    out.write('\r');
                    out.write('\n');
                }
                out.writeBytes(line.toByteArray());
                out.write('\r');
                out.write('\n');
            }
            pos = eol < 0 ? message.length : eol + 2;
        }
        return out.toByteArray();
    }

    private static int indexOfCrlf(byte[] b, int from) {
        for (int i = from; i + 1 < b.length; i++) {
            if (b[i] == '\r' && b[i + 1] == '\n') {
                return i;
            }
        }
        return -1;
    }
}
