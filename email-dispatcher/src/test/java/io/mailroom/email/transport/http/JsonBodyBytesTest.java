package io.mailroom.email.transport.http;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.EmailJson;
import io.mailroom.email.TestEmails;
import io.mailroom.email.api.Attachment;
import io.mailroom.mailbox.TagRules;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JSON body written straight to bytes is, byte for byte, what the adapter sent before: the text
 * of a Jackson tree of the same fields, encoded by the JDK. The tree is rebuilt here as it was.
 */
class JsonBodyBytesTest {

    private static final String KEY = "email-order-102";

    @Test
    void plainEmailIsTheTreesText() {
        Email email = new Email(EmailAddress.of("shop@example.com", "Shop"), EmailAddress.of("ann@example.com", null),
                "Order 102", "Hi\nthere\t\"quoted\" \\ back", "<p>a &amp; b</p>", headers(), "v1");
        assertSame(email);
    }

    @Test
    void everyFieldAndCharacterIsTheTreesText() {
        String nasty = "Nguyễn Văn Anh 😀 € \u00e9 </script> \u00a0 ü";
        Map<String, String> headers = headers();
        headers.put("X-Note", "=?UTF-8?B?w58=?= \\ \"q\"");
        Email email = new Email(EmailAddress.of("shop@example.com", "Cửa hàng 😀"), EmailAddress.of("ann@example.com", "Ann \"A\""),
                "Đơn hàng 102 😀", nasty + "\r\nline", "<html>" + nasty + "</html>", headers, "v2",
                EmailAddress.of("help@example.com", null),
                List.of(Attachment.of("Hóa đơn 102.pdf", "application/pdf", new byte[]{1, 2, 3, (byte) 0xff}),
                        Attachment.inline("logo", "logo.png", "image/png", "PNG".getBytes(StandardCharsets.US_ASCII))));
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("category", "invoice");
        tags.put("tenant", "t-1");
        Email many = email.withRecipients(List.of(EmailAddress.of("ann@example.com", "Ann"), EmailAddress.of("bob@example.com", "Bób")),
                List.of(EmailAddress.of("cc@example.com", null)), List.of(EmailAddress.of("bcc@example.com", "B")), tags);
        assertSame(email);
        assertSame(many);
        assertSame(TestEmails.several());
        assertSame(TestEmails.sample());
    }

    @Test
    void theRequestCarriesTheBytesAndPublishesThem() {
        Email email = new Email(EmailAddress.of("shop@example.com", null), EmailAddress.of("ann@example.com", null),
                "S", "T 😀", "<p>H</p>", headers(), "v1");
        HttpRequest request = new JsonMailApiAdapter(URI.create("http://localhost:1"), "tok").request(email, KEY).build();
        byte[] expected = tree(email, KEY).toString().getBytes(StandardCharsets.UTF_8);
        assertThat(PublishedBody.of(request)).isEqualTo(expected);
        assertThat(request.bodyPublisher().orElseThrow().contentLength()).isEqualTo(expected.length);
        // a publisher's subscriber (the JDK's client, a test) gets the same bytes
        HttpRequest copy = HttpRequest.newBuilder(request.uri()).POST(HttpRequest.BodyPublishers.fromPublisher(
                request.bodyPublisher().orElseThrow(), expected.length)).build();
        assertThat(PublishedBody.of(copy)).isEqualTo(expected);
    }

    private static void assertSame(Email email) {
        String expected = tree(email, KEY).toString();
        byte[] actual = JsonMailApiAdapter.body(email, KEY);
        assertThat(new String(actual, StandardCharsets.UTF_8)).isEqualTo(expected);
        assertThat(actual).isEqualTo(expected.getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, String> headers() {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Auto-Submitted", "auto-generated");
        h.put("X-Mailroom-Template", "v1");
        return h;
    }

    /** The adapter's body as it was built before it was written straight to bytes. */
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
}
