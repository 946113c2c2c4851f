package io.mailroom.email.render;

import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.api.Attachment;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.dispatch.EmailComposer;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.templates.TemplateCatalogue;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A version 2 envelope's attachments: loaded by hash, in the fingerprint, checked again, failing by field. */
class EnvelopeAttachmentsTest {

    private static final byte[] PDF = "%PDF-1.4 invoice".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OTHER_PDF = "%PDF-1.4 another invoice".getBytes(StandardCharsets.US_ASCII);
    private final Map<String, byte[]> stored = new HashMap<>(Map.of(Attachment.sha256(PDF), PDF, Attachment.sha256(OTHER_PDF), OTHER_PDF));

    private TemplatedComposer composer() throws Exception {
        TemplateCatalogue templates = TemplateCatalogue.load(io.mailroom.testing.TestTemplates.directory());
        Map<String, EmailTopics.Route> routes = EmailTopics.none().routesFor(templates.names());
        return new TemplatedComposer(templates, routes, EmailAddress.of("shop@example.com", "Shop"), Email.DEFAULT_MAX_BODY_BYTES,
                List.of(), hashes -> {
                    Map<String, byte[]> out = new HashMap<>();
                    hashes.forEach(h -> {
                        if (stored.containsKey(h)) {
                            out.put(h, stored.get(h));
                        }
                    });
                    return out;
                });
    }

    private static String envelope(String attachments) {
        return "{\"v\":2,\"template\":\"receipt\",\"locale\":\"en\",\"to\":[{\"address\":\"ann@example.com\",\"name\":\"Ann\"}],"
                + "\"attachments\":" + attachments + ",\"data\":{\"customer\":{\"name\":\"Ann\"},\"order\":{\"id\":\"102\",\"currency\":\"EUR\","
                + "\"total\":42.50,\"createdAt\":\"2026-12-02T10:00:00Z\",\"lines\":[]}}}";
    }

    private static String pdf(byte[] bytes, String filename) {
        return "[{\"filename\":\"" + filename + "\",\"contentType\":\"application/pdf\",\"sha256\":\"" + Attachment.sha256(bytes)
                + "\",\"size\":" + bytes.length + "}]";
    }

    private EmailComposer.Composed compose(String payload) throws Exception {
        Instant now = Instant.now();
        return composer().compose(new ClaimedMessage(102, now, "email.receipt", "order", "102", "email-order-102", null, payload,
                1, 10, 1, now, now.plusSeconds(60)));
    }

    @Test
    void theAttachmentsAreLoadedByHashIntoTheEmail() throws Exception {
        Email email = compose(envelope(pdf(PDF, "Hóa đơn 102.pdf"))).email();
        assertThat(email.attachments()).singleElement().satisfies(a -> {
            assertThat(a.filename()).isEqualTo("Hóa đơn 102.pdf");
            assertThat(a.content()).isEqualTo(PDF);
            assertThat(a.isInline()).isFalse();
        });
        assertThat(email.to().address()).isEqualTo("ann@example.com");
    }

    @Test
    void anotherFileOrAnotherNameMakesAnotherFingerprint_noAttachmentsLeavesTheVersion1PartsAlone() throws Exception {
        List<String> first = compose(envelope(pdf(PDF, "a.pdf"))).fingerprintParts();
        assertThat(compose(envelope(pdf(PDF, "a.pdf"))).fingerprintParts()).isEqualTo(first);
        assertThat(compose(envelope(pdf(OTHER_PDF, "a.pdf"))).fingerprintParts()).isNotEqualTo(first);
        assertThat(compose(envelope(pdf(PDF, "b.pdf"))).fingerprintParts()).isNotEqualTo(first);
        assertThat(first.getLast()).startsWith("attachments\n" + Attachment.sha256(PDF));
        assertThat(compose(envelope("[]")).fingerprintParts()).hasSize(first.size() - 1);
    }

    @Test
    void contentThatIsNotStoredOrABadEntryFailsTheEmailNamingTheField() {
        stored.clear();
        assertThatThrownBy(() -> compose(envelope(pdf(PDF, "a.pdf")))).isInstanceOfSatisfying(RenderException.class,
                e -> assertThat(e.field()).isEqualTo("payload.attachments[0].sha256"));
        assertThatThrownBy(() -> compose(envelope("[{\"filename\":\"a.pdf\"}]"))).isInstanceOfSatisfying(RenderException.class,
                e -> assertThat(e.field()).isEqualTo("payload.attachments[0]"));
        stored.put(Attachment.sha256(PDF), PDF);
        assertThatThrownBy(() -> compose(envelope(pdf(PDF, "../a.pdf")))).isInstanceOfSatisfying(RenderException.class,
                e -> assertThat(e.field()).isEqualTo("payload.attachments[0].filename"));
    }
}
