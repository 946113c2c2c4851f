package io.mailroom.email.transport.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.EmailJson;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.mailbox.TagRules;
import io.mailroom.email.api.Attachment;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;

/**
 * A JSON mail API in the style of providers that accept an {@code Idempotency-Key} header:
 *
 * <pre>
 * POST {baseUrl}/v1/emails
 * Authorization: Bearer {token}
 * Idempotency-Key: {key}
 * {"from":{"email":"shop@example.com","name":"Shop"},"to":[{"email":"ann@example.com","name":"Ann"}],
 *  "cc":[{"email":...}], "bcc":[{"email":...}] (only when there are any),
 *  "reply_to":{"email":"help@example.com"} (only when set),
 *  "subject":"...","text":"...","html":"...","headers":{"Auto-Submitted":"auto-generated"},
 *  "tags":[{"name":"idempotency_key","value":"email-order-102"},{"name":"category","value":"invoice"}]
 *  (only when the email has tags),
 *  "attachments":[{"filename":"Hóa đơn 102.pdf","content_type":"application/pdf","content":"JVBERi0x..."},
 *                 {"filename":"logo.png","content_type":"image/png","content":"iVBORw0K...","content_id":"logo"}]
 *  (only when there are some; content is the bytes in base64, content_id only for an inline part)}
 *
 * 200 {"id":"msg_123"}
 * 4xx {"message":"..."} or {"error":{"message":"..."}} or any body
 * </pre>
 */
public final class JsonMailApiAdapter implements MailApiAdapter {

    public static final String PATH = "/v1/emails";

    private final URI endpoint;
    private final String token;
    private final JsonMapper json = EmailJson.mapper();
    /**
     * Default features, as the tree's {@code toString()} writes (non-ASCII as is), and a character
     * outside the BMP as its four UTF-8 bytes, as the JDK encodes the tree's text, not as two escapes.
     */
    private static final JsonFactory BYTES = JsonFactory.builder()
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8).build();

    public JsonMailApiAdapter(URI baseUrl, String token) {
        String base = Objects.requireNonNull(baseUrl, "baseUrl").toString();
        this.endpoint = URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + PATH);
        this.token = Objects.requireNonNull(token, "token");
    }

    public JsonMailApiAdapter(HttpMailConfig config) {
        this(config.baseUrl(), config.token());
    }

    @Override
    public HttpRequest.Builder request(Email email, String idempotencyKey) {
        return HttpRequest.newBuilder(endpoint)
                .header("Authorization", "Bearer " + token)
                .header("Idempotency-Key", idempotencyKey)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(new BytesBody(body(email, idempotencyKey)));
    }

    /**
     * The request's JSON, written once straight to UTF-8 bytes (no tree, no String, no copy by a
     * publisher): the bytes the tree's text would encode to, field for field. A value the UTF-8
     * writer refuses (a lone surrogate, which the email's own checks keep out) takes the tree's way,
     * whose text the JDK encodes with a replacement, as it always was.
     */
    static byte[] body(Email email, String idempotencyKey) {
        ByteArrayBuilder out = new ByteArrayBuilder(2048);
        try (JsonGenerator g = BYTES.createGenerator(out)) {
            write(g, email, idempotencyKey);
        } catch (IOException e) {
            return tree(email, idempotencyKey).toString().getBytes(StandardCharsets.UTF_8);
        }
        return out.toByteArray();
    }

    private static void write(JsonGenerator g, Email email, String idempotencyKey) throws IOException {
        g.writeStartObject();
        g.writeFieldName("from");
        mailbox(g, email.from());
        g.writeArrayFieldStart("to");
        for (EmailAddress a : email.toList()) {
            mailbox(g, a);
        }
        g.writeEndArray();
        if (!email.cc().isEmpty()) {
            g.writeArrayFieldStart("cc");
            for (EmailAddress a : email.cc()) {
                mailbox(g, a);
            }
            g.writeEndArray();
        }
        if (!email.bcc().isEmpty()) {
            g.writeArrayFieldStart("bcc");
            for (EmailAddress a : email.bcc()) {
                mailbox(g, a);
            }
            g.writeEndArray();
        }
        if (email.replyTo() != null) {
            g.writeFieldName("reply_to");
            mailbox(g, email.replyTo());
        }
        g.writeStringField("subject", email.subject());
        g.writeStringField("text", email.textBody());
        g.writeStringField("html", email.htmlBody());
        g.writeObjectFieldStart("headers");
        for (Map.Entry<String, String> h : email.headers().entrySet()) {
            g.writeStringField(h.getKey(), h.getValue());
        }
        g.writeEndObject();
        if (!email.tags().isEmpty()) {
            // Resend-style tags, which the provider echoes in its delivery events; the key first, so an
            // event names its email even without the provider's message id. An email without tags
            // is sent as it always was.
            g.writeArrayFieldStart("tags");
            tag(g, TagRules.RESERVED, idempotencyKey);
            for (Map.Entry<String, String> t : email.tags().entrySet()) {
                tag(g, t.getKey(), t.getValue());
            }
            g.writeEndArray();
        }
        if (!email.attachments().isEmpty()) {
            g.writeArrayFieldStart("attachments");
            for (Attachment a : email.attachments()) {
                g.writeStartObject();
                g.writeStringField("filename", a.filename());
                g.writeStringField("content_type", a.contentType());
                g.writeStringField("content", Base64.getEncoder().encodeToString(a.content()));
                if (a.isInline()) {
                    g.writeStringField("content_id", a.contentId());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
        }
        g.writeEndObject();
    }

    private static void mailbox(JsonGenerator g, EmailAddress address) throws IOException {
        g.writeStartObject();
        g.writeStringField("email", address.address());
        if (address.displayName() != null) {
            g.writeStringField("name", address.displayName());
        }
        g.writeEndObject();
    }

    private static void tag(JsonGenerator g, String name, String value) throws IOException {
        g.writeStartObject();
        g.writeStringField("name", name);
        g.writeStringField("value", value);
        g.writeEndObject();
    }

    /** The body as a tree: only for the text of a body the UTF-8 writer refused. */
    private static ObjectNode tree(Email email, String idempotencyKey) {
        JsonMapper json = EmailJson.mapper();
        ObjectNode body = json.createObjectNode();
        body.set("from", mailbox(json, email.from()));
        ArrayNode to = body.putArray("to");
        email.toList().forEach(a -> to.add(mailbox(json, a)));
        if (!email.cc().isEmpty()) {
            ArrayNode cc = body.putArray("cc");
            email.cc().forEach(a -> cc.add(mailbox(json, a)));
        }
        if (!email.bcc().isEmpty()) {
            ArrayNode bcc = body.putArray("bcc");
            email.bcc().forEach(a -> bcc.add(mailbox(json, a)));
        }
        if (email.replyTo() != null) {
            body.set("reply_to", mailbox(json, email.replyTo()));
        }
        body.put("subject", email.subject());
        body.put("text", email.textBody());
        body.put("html", email.htmlBody());
        ObjectNode headers = body.putObject("headers");
        email.headers().forEach(headers::put);
        if (!email.tags().isEmpty()) {
            ArrayNode tags = body.putArray("tags");
            tags.addObject().put("name", TagRules.RESERVED).put("value", idempotencyKey);
            email.tags().forEach((name, value) -> tags.addObject().put("name", name).put("value", value));
        }
        if (!email.attachments().isEmpty()) {
            ArrayNode attachments = body.putArray("attachments");
            for (Attachment a : email.attachments()) {
                ObjectNode node = attachments.addObject();
                node.put("filename", a.filename());
                node.put("content_type", a.contentType());
                node.put("content", Base64.getEncoder().encodeToString(a.content()));
                if (a.isInline()) {
                    node.put("content_id", a.contentId());
                }
            }
        }
        return body;
    }

    private static ObjectNode mailbox(JsonMapper json, EmailAddress address) {
        ObjectNode node = json.createObjectNode();
        node.put("email", address.address());
        if (address.displayName() != null) {
            node.put("name", address.displayName());
        }
        return node;
    }

    @Override
    public String messageId(String responseBody) {
        JsonNode root = parse(responseBody);
        JsonNode id = root == null ? null : root.get("id");
        return id != null && id.isTextual() && !id.textValue().isBlank() ? id.textValue() : null;
    }

    @Override
    public String errorText(String responseBody) {
        JsonNode root = parse(responseBody);
        if (root != null && root.isObject()) {
            JsonNode message = root.get("message");
            if (message == null && root.get("error") != null) {
                JsonNode error = root.get("error");
                message = error.isObject() ? error.get("message") : error;
            }
            if (message != null && message.isTextual()) {
                return message.textValue();
            }
        }
        return responseBody == null ? "" : responseBody;
    }

    private JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            return json.readTree(body);
        } catch (JsonProcessingException e) {
            return null;
        }
    }
}
