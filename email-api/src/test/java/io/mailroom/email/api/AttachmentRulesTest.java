package io.mailroom.email.api;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What an attachment must be (at build) and the configured limits (at enqueue), each refusal naming its field. */
class AttachmentRulesTest {

    private static final byte[] PDF = "%PDF-1.4 tiny".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private static OutgoingEmail.Builder email() {
        return OutgoingEmail.template("invoice").to("an@example.com", null).about("order", "102")
                .idempotencyKey("email-invoice-102").data(Map.of());
    }

    private static void refusedAtBuild(OutgoingEmail.Builder b, String field, String words) {
        assertThatThrownBy(b::build).isInstanceOfSatisfying(InvalidEmailException.class, e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.getMessage()).contains(words);
        });
    }

    @Test
    void aGoodAttachmentAndAnInlineImageAreKeptInOrderWithTheirHashes() {
        OutgoingEmail e = email().attach("Hóa đơn 102.pdf", "application/pdf", PDF)
                .inline("logo", "logo.png", "image/png", new byte[]{1, 2, 3}).build();
        assertThat(e.attachments()).extracting(Attachment::filename).containsExactly("Hóa đơn 102.pdf", "logo.png");
        assertThat(e.attachments().get(0).sha256()).isEqualTo(Attachment.sha256(PDF)).hasSize(64).matches("[0-9a-f]{64}");
        assertThat(e.attachments().get(0).isInline()).isFalse();
        assertThat(e.attachments().get(1).contentId()).isEqualTo("logo");
    }

    @Test
    void theBytesAreCopiedSoACallerChangingItsArrayLaterChangesNothing() {
        byte[] mine = PDF.clone();
        OutgoingEmail e = email().attach("a.pdf", "application/pdf", mine).build();
        mine[0] = 'X';
        assertThat(e.attachments().getFirst().content()).isEqualTo(PDF);
    }

    @Test
    void aFilenameIsAFileNameOnly() {
        refusedAtBuild(email().attach("ok.pdf", "application/pdf", PDF).attach("../etc/passwd", "text/plain", PDF),
                "attachments[1].filename", "path separator");
        refusedAtBuild(email().attach("C:\\x.pdf", "application/pdf", PDF), "attachments[0].filename", "path separator");
        refusedAtBuild(email().attach("a\r\nBcc: x@evil.example.pdf", "application/pdf", PDF), "attachments[0].filename",
                "control character U+000D");
        refusedAtBuild(email().attach("x".repeat(256), "application/pdf", PDF), "attachments[0].filename", "255");
        refusedAtBuild(email().attach(" ", "application/pdf", PDF), "attachments[0].filename", "missing");
        refusedAtBuild(email().attach("..", "application/pdf", PDF), "attachments[0].filename", "not a file's name");
        refusedAtBuild(email().attach("a\uD800.pdf", "application/pdf", PDF), "attachments[0].filename", "surrogate");
    }

    @Test
    void aContentTypeIsTypeSlashSubtypeWithoutParameters() {
        refusedAtBuild(email().attach("a.pdf", "pdf", PDF), "attachments[0].contentType", "type/subtype");
        refusedAtBuild(email().attach("a.ics", "text/calendar; method=REQUEST", PDF), "attachments[0].contentType", "without parameters");
        refusedAtBuild(email().attach("a.eml", "multipart/mixed", PDF), "attachments[0].contentType", "multipart");
        refusedAtBuild(email().attach("a.pdf", null, PDF), "attachments[0].contentType", "got nothing");
    }

    @Test
    void aContentIdIsOneACidUrlCanNameAndIsUniqueInTheEmail() {
        refusedAtBuild(email().inline("lo go", "l.png", "image/png", PDF), "attachments[0].contentId", "got 'lo go'");
        refusedAtBuild(email().inline("<logo>", "l.png", "image/png", PDF), "attachments[0].contentId", "starting with");
        refusedAtBuild(email().inline("logo", "l.png", "image/png", PDF).inline("LOGO", "m.png", "image/png", PDF),
                "attachments[1].contentId", "given twice");
    }

    @Test
    void emptyOrMissingContentIsRefused() {
        refusedAtBuild(email().attach("a.pdf", "application/pdf", new byte[0]), "attachments[0].content", "no bytes");
        assertThatThrownBy(() -> email().attach("a.pdf", "application/pdf", PDF).attach("b.pdf", "application/pdf", null))
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> assertThat(e.field()).isEqualTo("attachments[1].content"));
    }

    @Test
    void theConfiguredLimitsAreCheckedAtEnqueueNamingTheLimit() {
        AttachmentLimits limits = new AttachmentLimits(2, 10, 15);
        assertThatThrownBy(() -> limits.check(List.of(Attachment.of("a", "a/b", new byte[3]), Attachment.of("b", "a/b", new byte[3]),
                Attachment.of("c", "a/b", new byte[3])))).isInstanceOfSatisfying(InvalidEmailException.class, e -> {
                    assertThat(e.field()).isEqualTo("attachments");
                    assertThat(e.getMessage()).contains("3 attachments, over the limit of 2");
                });
        assertThatThrownBy(() -> limits.check(List.of(Attachment.of("a", "a/b", new byte[3]), Attachment.of("b", "a/b", new byte[11]))))
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> {
                    assertThat(e.field()).isEqualTo("attachments[1].content");
                    assertThat(e.getMessage()).contains("11 bytes, over the limit of 10 bytes per attachment");
                });
        assertThatThrownBy(() -> limits.check(List.of(Attachment.of("a", "a/b", new byte[8]), Attachment.of("b", "a/b", new byte[8]))))
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> {
                    assertThat(e.field()).isEqualTo("attachments");
                    assertThat(e.getMessage()).contains("16 bytes together, over the limit of 15 bytes per email");
                });
        limits.check(List.of(Attachment.of("a", "a/b", new byte[7]), Attachment.of("b", "a/b", new byte[8])));
    }

    @Test
    void theDefaultsAreTenAttachmentsOfTenMiBAndTwentyMiBInAll() {
        assertThat(AttachmentLimits.DEFAULTS).isEqualTo(new AttachmentLimits(10, 10 << 20, 20 << 20));
        EmailOutbox outbox = new EmailOutbox(new io.mailroom.outbox.OutboxEnqueuer());
        OutgoingEmail.Builder b = email();
        for (int i = 0; i < 11; i++) {
            b.attach("f" + i + ".txt", "text/plain", new byte[]{(byte) i});
        }
        OutgoingEmail eleven = b.build();
        assertThatThrownBy(() -> outbox.message(eleven)).isInstanceOfSatisfying(InvalidEmailException.class,
                e -> assertThat(e.getMessage()).isEqualTo("attachments has 11 attachments, over the limit of 10"));
    }

    @Test
    void badLimitsAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> new AttachmentLimits(-1, 10, 10)).hasMessageStartingWith("maxCount must be");
        assertThatThrownBy(() -> new AttachmentLimits(1, 0, 10)).hasMessageStartingWith("maxBytesEach must be");
        assertThatThrownBy(() -> new AttachmentLimits(1, 10, 9)).hasMessageStartingWith("maxBytesTotal must be");
        assertThatThrownBy(() -> new AttachmentLimits(100, 10, 10)).hasMessageStartingWith("maxCount must be");
    }

    @Test
    void anEmailWithoutAttachmentsKeepsTheVersion1EnvelopeByteForByte_oneWithThemIsVersion2WithoutTheBytes() {
        OutgoingEmail plain = email().build();
        assertThat(EmailOutbox.envelope(plain)).isEqualTo(
                "{\"v\":1,\"template\":\"invoice\",\"locale\":\"en\",\"to\":{\"address\":\"an@example.com\"},\"headers\":{},\"data\":{}}");
        OutgoingEmail with = email().attach("Hóa đơn 102.pdf", "application/pdf", PDF).inline("logo", "logo.png", "image/png", new byte[]{1})
                .build();
        assertThat(EmailOutbox.envelope(with)).isEqualTo("{\"v\":2,\"template\":\"invoice\",\"locale\":\"en\",\"to\":[{\"address\":\"an@example.com\"}],"
                + "\"attachments\":[{\"filename\":\"Hóa đơn 102.pdf\",\"contentType\":\"application/pdf\",\"sha256\":\"" + Attachment.sha256(PDF)
                + "\",\"size\":" + PDF.length + "},{\"filename\":\"logo.png\",\"contentType\":\"image/png\",\"sha256\":\""
                + Attachment.sha256(new byte[]{1}) + "\",\"size\":1,\"contentId\":\"logo\"}],\"data\":{}}");
    }

    @Test
    void thePayloadLimitDoesNotCountAttachmentBytes() {
        EmailOutbox small = new EmailOutbox(new io.mailroom.outbox.OutboxEnqueuer(), null, 1024);
        small.message(email().attach("big.bin", "application/octet-stream", new byte[1 << 20]).build());
    }
}
