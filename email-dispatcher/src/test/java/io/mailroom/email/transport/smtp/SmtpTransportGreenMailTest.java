package io.mailroom.email.transport.smtp;

import com.icegreen.greenmail.configuration.GreenMailConfiguration;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.TestEmails;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.email.render.RenderException;
import io.mailroom.email.transport.SendResult;
import jakarta.mail.Message;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeMultipart;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Real delivery into GreenMail: what arrives is exactly what was rendered, under the deterministic Message-ID. */
class SmtpTransportGreenMailTest {

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort())
            .withConfiguration(GreenMailConfiguration.aConfig().withUser("shop@example.com", "shop", "s3cret"))
            .withPerMethodLifecycle(true);

    static final String PAYLOAD = """
            {"v":1,"template":"receipt","locale":"en","to":{"address":"zoe@example.com","name":"Zoë Ünal"},"headers":{},
             "data":{"customer":{"name":"Zoë Ünal"},"order":{"id":"102","currency":"EUR","total":42.50,"createdAt":"2026-12-02T10:00:00Z",
             "lines":[{"sku":"A1","name":"Tasse « Café » & <Mug>","quantity":2,"unitPrice":21.25,"amount":42.50}]}}}""";

    /** The email the dispatcher renders from an envelope on the test receipt's topic. */
    static Email render(String envelope) throws Exception {
        String topic = "email.receipt";
        TemplatedComposer composer = new TemplatedComposer(TemplateCatalogue.load(io.mailroom.testing.TestTemplates.directory()),
                Map.of(topic, new EmailTopics.Route(topic, "receipt", null)), TestEmails.SHOP, Email.DEFAULT_MAX_BODY_BYTES);
        Instant now = Instant.now();
        return composer.compose(new ClaimedMessage(102, now, topic, "order", "102", "email-order-102", null, envelope,
                1, 10, 1, now, now.plusSeconds(60))).email();
    }

    SmtpTransport transport;

    @AfterEach
    void close() {
        if (transport != null) {
            transport.close();
        }
    }

    SmtpTransport transport(String username, String password) {
        transport = new SmtpTransport(SmtpConfig.builder()
                .host("127.0.0.1").port(greenMail.getSmtp().getPort()).security(SmtpSecurity.NONE)
                .credentials(username, password)
                .from(EmailAddress.of("bounces@example.com")).messageIdDomain("shop.example.com")
                .connectTimeout(Duration.ofSeconds(2)).readTimeout(Duration.ofSeconds(2)).build());
        return transport;
    }

    @Test
    void deliversExactlyOneEmailWithBothBodiesAndTheDeterministicMessageId() throws Exception {
        Email email = render(PAYLOAD);

        SendResult result = transport("shop", "s3cret").send(email, "email-order-102");

        assertThat(result).isInstanceOf(SendResult.Sent.class);
        assertThat(((SendResult.Sent) result).providerMessageId()).isEqualTo("<email-order-102.6ab1e78d346f7a0b@shop.example.com>");
        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).hasSize(1);
        MimeMessage m = received[0];
        assertThat(m.getHeader("Message-ID")).containsExactly("<email-order-102.6ab1e78d346f7a0b@shop.example.com>");
        assertThat(m.getSubject()).isEqualTo("Receipt #102");
        InternetAddress to = (InternetAddress) m.getRecipients(Message.RecipientType.TO)[0];
        assertThat(to.getAddress()).isEqualTo("zoe@example.com");
        assertThat(to.getPersonal()).isEqualTo("Zoë Ünal");
        assertThat(m.getRecipients(Message.RecipientType.CC)).isNull();
        assertThat(((InternetAddress) m.getFrom()[0]).getAddress()).isEqualTo("shop@example.com");
        assertThat(m.getHeader("Auto-Submitted")).containsExactly("auto-generated");
        assertThat(m.getHeader("Return-Path")).containsExactly("<bounces@example.com>");

        assertThat(m.getContentType()).startsWith("multipart/alternative");
        MimeMultipart alternative = (MimeMultipart) m.getContent();
        assertThat(alternative.getCount()).isEqualTo(2);
        assertThat(alternative.getBodyPart(0).getContentType()).startsWith("text/plain").containsIgnoringCase("charset=UTF-8");
        assertThat(alternative.getBodyPart(1).getContentType()).startsWith("text/html").containsIgnoringCase("charset=UTF-8");
        assertThat(crlfToLf((String) alternative.getBodyPart(0).getContent())).isEqualTo(email.textBody());
        assertThat(crlfToLf((String) alternative.getBodyPart(1).getContent())).isEqualTo(email.htmlBody())
                .contains("Tasse « Café » &amp; &lt;Mug&gt;");
    }

    @Test
    void everyAttemptOfOneEffectCarriesTheSameMessageId() throws Exception {
        SmtpTransport t = transport("shop", "s3cret");
        t.send(TestEmails.sample(), "email-order-7");
        t.send(TestEmails.sample(), "email-order-7");
        t.send(TestEmails.sample(), "email-order-7-resend-1");

        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).hasSize(3);
        assertThat(received[0].getMessageID()).isEqualTo(received[1].getMessageID());
        assertThat(received[2].getMessageID()).isNotEqualTo(received[0].getMessageID());
    }

    @Test
    void wrongCredentialsAreMisconfigured() {
        SendResult result = transport("shop", "wrong").send(TestEmails.sample(), "email-order-102");

        assertThat(result).isInstanceOf(SendResult.Misconfigured.class);
        assertThat(((SendResult.Misconfigured) result).code()).isEqualTo("smtp-535");
        assertThat(((SendResult.Misconfigured) result).error()).doesNotContain("wrong");
        assertThat(greenMail.getReceivedMessages()).isEmpty();
    }

    @Test
    void headerInjectionAndInvalidAddressesFailPermanentlyWithoutAnSmtpSession() {
        SmtpTransport t = transport("shop", "s3cret");

        assertThatThrownBy(() -> render(PAYLOAD.replace("\"name\":\"Zoë Ünal\"}", "\"name\":\"Zoë\\r\\nBcc: eve@example.org\"}")))
                .isInstanceOf(RenderException.class).hasMessageContaining("payload.to");
        assertThatThrownBy(() -> render(PAYLOAD.replace("zoe@example.com", "zoe@example.com\\r\\nBcc: eve@example.org")))
                .isInstanceOf(RenderException.class).hasMessageContaining("payload.to");
        assertThatThrownBy(() -> new Email(TestEmails.SHOP, EmailAddress.of("zoe@example.com"), "Hi\r\nBcc: eve@example.org",
                "t", "h", Map.of(), "v1")).isInstanceOf(InvalidEmailException.class).hasMessageContaining("subject");
        assertThatThrownBy(() -> EmailAddress.of("zoe@@example.com")).isInstanceOf(InvalidEmailException.class);
        SendResult badKey = t.send(TestEmails.sample(), "email-order-102\r\nBcc: eve@example.org");
        assertThat(badKey).isInstanceOf(SendResult.Permanent.class);

        assertThat(greenMail.getReceivedMessages()).isEmpty();
        assertThat(t.connectionsOpened()).isZero();
    }

    private static String crlfToLf(String s) {
        return s.replace("\r\n", "\n");
    }
}
