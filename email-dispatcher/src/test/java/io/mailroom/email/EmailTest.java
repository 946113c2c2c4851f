package io.mailroom.email;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EmailTest {

    static final EmailAddress FROM = EmailAddress.of("shop@example.com", "Shop");
    static final EmailAddress TO = EmailAddress.of("ann@example.com", "Ann");

    static Email email(String subject, String text, String html, Map<String, String> headers) {
        return new Email(FROM, TO, subject, text, html, headers, "t/v1");
    }

    @Test
    void fingerprintPartsAreRecipientSubjectBodiesAndTemplateVersion() {
        Email e = email("Hi", "text\n", "<p>html</p>", Map.of());
        assertThat(e.fingerprintParts()).containsExactly("ann@example.com", "Hi", "text\n", "<p>html</p>", "t/v1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Hi\r\nBcc: eve@example.org", "Hi\nthere", "Hi\rthere", "Hi\u0000", "Hi\u0085", "Hi\uDC00", " ",
            "Hi =?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?=", "=?UTF-8?Q?Support_=E2=80=AEmoc.knab?="})
    void rejectsSubjectsThatCouldInjectHeadersOrAreEmpty(String subject) {
        assertThatThrownBy(() -> email(subject, "t", "h", Map.of()))
                .isInstanceOf(InvalidEmailException.class)
                .extracting(e -> ((InvalidEmailException) e).field()).isEqualTo("subject");
    }

    @Test
    void bodiesMayHaveLineBreaksAndTabsButNoOtherControlsOrLoneSurrogates() {
        assertThat(email("s", "a\r\n\tb", "<p>\n</p>", Map.of()).textBody()).isEqualTo("a\r\n\tb");
        assertThatThrownBy(() -> email("s", "a\u0000b", "h", Map.of()))
                .isInstanceOf(InvalidEmailException.class).hasMessageContaining("textBody").hasMessageContaining("U+0000");
        assertThatThrownBy(() -> email("s", "t", "x\uD83Dy", Map.of()))
                .isInstanceOf(InvalidEmailException.class).hasMessageContaining("htmlBody").hasMessageContaining("lone surrogate");
        assertThat(email("s", "t \uD83D\uDE00", "h", Map.of()).textBody()).endsWith("\uD83D\uDE00");
    }

    @Test
    void customHeadersCannotReplaceTransportHeadersOrCarryLineBreaks() {
        assertThatThrownBy(() -> email("s", "t", "h", Map.of("Bcc", "eve@example.org")))
                .isInstanceOf(InvalidEmailException.class).hasMessageContaining("headers.Bcc");
        assertThatThrownBy(() -> email("s", "t", "h", Map.of("message-id", "<x@y>")))
                .isInstanceOf(InvalidEmailException.class);
        assertThatThrownBy(() -> email("s", "t", "h", Map.of("X-Tag", "a\r\nBcc: eve@example.org")))
                .isInstanceOf(InvalidEmailException.class).hasMessageContaining("headers.X-Tag");
        assertThatThrownBy(() -> email("s", "t", "h", Map.of("X-Bad:Name", "v")))
                .isInstanceOf(InvalidEmailException.class);
        Map<String, String> twice = new LinkedHashMap<>();
        twice.put("X-A", "1");
        twice.put("x-a", "2");
        assertThatThrownBy(() -> email("s", "t", "h", twice)).isInstanceOf(InvalidEmailException.class).hasMessageContaining("twice");
    }

    @Test
    void headersKeepTheirOrderAndCannotBeModified() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("X-B", "2");
        headers.put("X-A", "1");
        Email e = email("s", "t", "h", headers);
        headers.put("X-C", "3");
        assertThat(e.headers().keySet()).containsExactly("X-B", "X-A");
        assertThatThrownBy(() -> e.headers().put("X-D", "4")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void bodySizeLimitCountsUtf8BytesOfBothBodies() {
        Email e = email("s", "é".repeat(300), "x".repeat(400), Map.of());
        assertThat(e.bodyBytes()).isEqualTo(1000);
        assertThat(e.requireBodyWithin(1000)).isSameAs(e);
        assertThatThrownBy(() -> e.requireBodyWithin(999))
                .isInstanceOf(InvalidEmailException.class)
                .hasMessage("body: text and HTML bodies are 1000 bytes, the limit is 999");
    }

    @Test
    void toStringShowsNeitherBodyNorFullRecipient() {
        String s = email("Order 7", "secret text body", "<p>secret html</p>", Map.of()).toString();
        assertThat(s).doesNotContain("secret").doesNotContain("ann@example.com").contains("a***@example.com");
    }
}
