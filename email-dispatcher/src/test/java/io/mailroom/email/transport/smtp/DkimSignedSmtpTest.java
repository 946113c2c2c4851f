package io.mailroom.email.transport.smtp;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.TestEmails;
import io.mailroom.email.dkim.DkimAlgorithm;
import io.mailroom.email.dkim.DkimKey;
import io.mailroom.email.dkim.DkimKeys;
import io.mailroom.email.dkim.DkimSettings;
import io.mailroom.email.transport.SendResult;
import io.mailroom.testing.DkimVerifier;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * DKIM-signed mail as a real SMTP server receives it (GreenMail, and the scripted server for the
 * pipelined path), checked by dkimpy, which shares no code with the signer: rsa-sha256,
 * ed25519-sha256, both at once, and a changed signed header that must fail.
 */
class DkimSignedSmtpTest {

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort()).withPerMethodLifecycle(true);

    static final Instant NOW = Instant.parse("2026-12-06T02:00:00Z");
    static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
    static KeyPair rsa;
    static KeyPair ed25519;

    @TempDir
    Path dir;
    SmtpTransport transport;

    @BeforeAll
    static void keysAndVerifier() {
        String why = DkimVerifier.unavailableReason();
        Assumptions.assumeTrue(why == null, () -> "skipped: dkimpy is needed to verify signatures independently: " + why);
        rsa = DkimVerifier.newKeyPair("RSA");
        ed25519 = DkimVerifier.newKeyPair("Ed25519");
    }

    @AfterEach
    void close() {
        if (transport != null) {
            transport.close();
        }
    }

    DkimKey key(String selector, DkimAlgorithm algorithm, KeyPair pair) throws Exception {
        Path pem = DkimVerifier.writePem(pair.getPrivate(), dir.resolve(selector + ".pem"));
        return DkimKeys.load(DkimSettings.SETTING, "example.com", selector, algorithm, pem.toString(), null);
    }

    static Map<String, String> records() {
        return Map.of("rsa1._domainkey.example.com", DkimVerifier.txtRecord(rsa.getPublic()),
                "ed1._domainkey.example.com", DkimVerifier.txtRecord(ed25519.getPublic()));
    }

    byte[] sendThroughGreenMail(Email email, DkimKey... keys) throws Exception {
        transport = new SmtpTransport(SmtpConfig.builder().host("127.0.0.1").port(greenMail.getSmtp().getPort())
                .security(SmtpSecurity.NONE).from(EmailAddress.of("bounces@example.com")).messageIdDomain("shop.example.com")
                .verp(Verp.parse("bounces+{key}@example.com"))
                .connectTimeout(Duration.ofSeconds(2)).readTimeout(Duration.ofSeconds(5))
                .dkim(new DkimSettings(List.of(keys), DkimSettings.DnsCheck.OFF)).build(), CLOCK);
        assertThat(transport.send(email, "email-order-102")).isInstanceOf(SendResult.Sent.class);
        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).hasSize(1);
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        received[0].writeTo(raw);
        return raw.toByteArray();
    }

    @Test
    void rsaSha256SignedReceiptVerifiesWithDkimpy() throws Exception {
        byte[] raw = sendThroughGreenMail(SmtpTransportGreenMailTest.render(SmtpTransportGreenMailTest.PAYLOAD),
                key("rsa1", DkimAlgorithm.RSA_SHA256, rsa));

        DkimVerifier.Result result = DkimVerifier.verify(raw, records());
        assertThat(result.passed()).as(result.output()).isTrue();
        assertThat(result.output()).isEqualTo("pass d=example.com s=rsa1 a=rsa-sha256");

        String text = new String(raw, StandardCharsets.US_ASCII);
        String signature = unfolded(text);
        assertThat(signature).contains("c=relaxed/relaxed", "t=" + NOW.getEpochSecond(), "d=example.com", "s=rsa1")
                .doesNotContain("l=", "x=");
        // From oversigned; the receipt's own headers signed; Return-Path (added by the server) not
        assertThat(tag(signature, "h")).startsWith("from:from:").contains(":subject:", ":date:", ":to:", ":message-id:",
                ":mime-version:", ":content-type").doesNotContain("return-path", "received", "auto-submitted");
        // the VERP envelope went out beside the signature
        assertThat(text).contains("Return-Path: <bounces+");
    }

    @Test
    void ed25519Sha256SignedMailVerifiesWithDkimpy() throws Exception {
        byte[] raw = sendThroughGreenMail(TestEmails.sample(), key("ed1", DkimAlgorithm.ED25519_SHA256, ed25519));

        DkimVerifier.Result result = DkimVerifier.verify(raw, records());
        assertThat(result.output()).isEqualTo("pass d=example.com s=ed1 a=ed25519-sha256");
        assertThat(result.passed()).isTrue();
    }

    @Test
    void aDomainWithBothKeysIsSignedTwiceAndBothVerify() throws Exception {
        byte[] raw = sendThroughGreenMail(TestEmails.sample(), key("rsa1", DkimAlgorithm.RSA_SHA256, rsa),
                key("ed1", DkimAlgorithm.ED25519_SHA256, ed25519));

        DkimVerifier.Result result = DkimVerifier.verify(raw, records());
        assertThat(result.output().lines().sorted().toList())
                .containsExactly("pass d=example.com s=ed1 a=ed25519-sha256", "pass d=example.com s=rsa1 a=rsa-sha256");
    }

    @Test
    void aChangedSignedHeaderOrBodyFailsVerification() throws Exception {
        byte[] raw = sendThroughGreenMail(SmtpTransportGreenMailTest.render(SmtpTransportGreenMailTest.PAYLOAD),
                key("rsa1", DkimAlgorithm.RSA_SHA256, rsa), key("ed1", DkimAlgorithm.ED25519_SHA256, ed25519));
        String text = new String(raw, StandardCharsets.US_ASCII);
        assertThat(DkimVerifier.verify(raw, records()).passed()).isTrue();

        byte[] subject = text.replace("Subject: Receipt #102", "Subject: Receipt #103").getBytes(StandardCharsets.US_ASCII);
        assertThat(subject).isNotEqualTo(raw);
        DkimVerifier.Result changedSubject = DkimVerifier.verify(subject, records());
        assertThat(changedSubject.passed()).as(changedSubject.output()).isFalse();
        assertThat(changedSubject.output().lines()).hasSize(2).allSatisfy(line -> assertThat(line).startsWith("fail"));

        // a second From added in transit: the oversigned From makes that fail too
        byte[] extraFrom = text.replaceFirst("\r\nFrom: ", "\r\nFrom: Mallory <m@evil.example>\r\nFrom: ").getBytes(StandardCharsets.US_ASCII);
        assertThat(DkimVerifier.verify(extraFrom, records()).passed()).isFalse();

        int body = text.indexOf("\r\n\r\n") + 4;
        byte[] changedBody = (text.substring(0, body) + "X" + text.substring(body)).getBytes(StandardCharsets.US_ASCII);
        DkimVerifier.Result bodyResult = DkimVerifier.verify(changedBody, records());
        assertThat(bodyResult.passed()).as(bodyResult.output()).isFalse();
    }

    @Test
    void thePipelinedPathSendsTheSameSignedBytes() throws Exception {
        try (ScriptedSmtpServer server = ScriptedSmtpServer.start()) {
            server.pipelining = true;
            transport = new SmtpTransport(SmtpTransportTest.config(server.port())
                    .verp(Verp.parse("bounces+{key}@example.com"))
                    .dkim(new DkimSettings(List.of(key("ed1", DkimAlgorithm.ED25519_SHA256, ed25519)), DkimSettings.DnsCheck.OFF))
                    .build(), CLOCK);

            assertThat(transport.send(TestEmails.sample(), "email-order-1")).isInstanceOf(SendResult.Sent.class);

            assertThat(server.batches().get(1).getFirst()).startsWith("MAIL FROM:<bounces+");
            byte[] raw = server.messages.getFirst().getBytes(StandardCharsets.US_ASCII);
            assertThat(new String(raw, StandardCharsets.US_ASCII)).startsWith("DKIM-Signature: v=1; a=ed25519-sha256;");
            DkimVerifier.Result result = DkimVerifier.verify(raw, records());
            assertThat(result.output()).isEqualTo("pass d=example.com s=ed1 a=ed25519-sha256");
        }
    }

    @Test
    void foldedEncodedHeadersDotsAndTrailingWhitespaceSurviveTheWire() throws Exception {
        String subject = "Ihre Bestellung Nr. 102 über « Tasse Café » ist unterwegs, und dies ist ein sehr langer Betreff";
        Email email = new Email(EmailAddress.of("shop@example.com", "Café Shop"), EmailAddress.of("zoe@example.com", "Zoë Ünal"),
                subject, ".starts with a dot\n  indented   with  spaces  \nlast line\n\n\n",
                "<p>.html</p>\n\n", Map.of("List-Unsubscribe", "<https://shop.example/u/102>",
                "List-Unsubscribe-Post", "List-Unsubscribe=One-Click"), "test/v1", EmailAddress.of("help@example.com"));
        byte[] raw = sendThroughGreenMail(email, key("rsa1", DkimAlgorithm.RSA_SHA256, rsa),
                key("ed1", DkimAlgorithm.ED25519_SHA256, ed25519));
        String text = new String(raw, StandardCharsets.US_ASCII);
        // the Subject is RFC 2047-encoded and folded; the body line starting with a dot was dot-stuffed on the wire
        assertThat(text).containsPattern("Subject: =\\?UTF-8\\?[^\r]*\r\n[ \t]=\\?UTF-8\\?").contains("\r\n.starts with a dot");

        DkimVerifier.Result result = DkimVerifier.verify(raw, records());
        assertThat(result.passed()).as(result.output()).isTrue();
        assertThat(tag(unfolded(text), "h")).contains("reply-to", "list-unsubscribe:list-unsubscribe-post");
    }

    @Test
    void aSenderDomainWithoutKeyIsSentUnsigned() throws Exception {
        Email other = new Email(EmailAddress.of("news@other.example"), EmailAddress.of("ann@example.com"), "Hi", "text\n", "<p>html</p>",
                Map.of(), "test/v1");
        byte[] raw = sendThroughGreenMail(other, key("rsa1", DkimAlgorithm.RSA_SHA256, rsa));

        assertThat(new String(raw, StandardCharsets.US_ASCII)).doesNotContain("DKIM-Signature");
        assertThat(DkimVerifier.verify(raw, records()).exitCode()).isEqualTo(2);
    }

    private static String unfolded(String message) {
        Matcher m = Pattern.compile("DKIM-Signature:(.*?)\r\n(?![ \t])", Pattern.DOTALL).matcher(message);
        assertThat(m.find()).isTrue();
        return m.group(1).replaceAll("\r\n[ \t]+", " ");
    }

    private static String tag(String signature, String name) {
        Matcher m = Pattern.compile("(?:^|;)\\s*" + name + "=([^;]*)").matcher(signature);
        assertThat(m.find()).isTrue();
        return m.group(1).replaceAll("\\s+", "");
    }
}
