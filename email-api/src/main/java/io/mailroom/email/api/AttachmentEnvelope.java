package io.mailroom.email.api;

import java.util.List;

/**
 * The envelope's {@code "attachments"} key: each attachment's filename, content type, SHA-256, size
 * and, for an inline part, its content id, in the order given; never the bytes. Nothing when the
 * email has none (its envelope stays version 1).
 */
final class AttachmentEnvelope {

    private AttachmentEnvelope() {
    }

    static void write(StringBuilder out, List<Attachment> attachments) {
        if (attachments.isEmpty()) {
            return;
        }
        out.append(",\"attachments\":[");
        for (int i = 0; i < attachments.size(); i++) {
            Attachment a = attachments.get(i);
            out.append(i == 0 ? "{\"filename\":" : ",{\"filename\":");
            Json.string(out, a.filename());
            out.append(",\"contentType\":");
            Json.string(out, a.contentType());
            out.append(",\"sha256\":\"").append(a.sha256()).append("\",\"size\":").append(a.size());
            if (a.contentId() != null) {
                out.append(",\"contentId\":");
                Json.string(out, a.contentId());
            }
            out.append('}');
        }
        out.append(']');
    }
}
