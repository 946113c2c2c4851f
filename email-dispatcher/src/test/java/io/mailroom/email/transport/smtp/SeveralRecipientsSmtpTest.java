package io.mailroom.email.transport.smtp;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import jakarta.mail.Message;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several recipients over SMTP: To and Cc in the headers, every recipient (Bcc too) in the
 * envelope only, one VERP return path for the whole transaction, and the tags as headers.
 */
class SeveralRecipientsSmtpTest {

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort())
            .withPerMethodLifecycle(true);

    SmtpTransport transport;
    ScriptedSmtpServer scripted;

    @AfterEach
    void close() throws Exception {
        if (transport != null) {
            transport.close();
        }
        if (scripted != null) {
            scripted.close();
        }
    }

    @Test
    void everyRecipientGetsIt_toAndCcAreInTheHeaders_bccInNone_tagsAreHeaders() throws Exception {
        transport = new SmtpTransport(SmtpConfig.builder().host("127.0.0.1").port(greenMail.getSmtp().getPort())
                .security(SmtpSecurity.NONE).from(EmailAddress.of("bounces@example.com"))
                .verp(Verp.parse("bounces+{key}@example.com"))
                .connectTimeout(Duration.ofSeconds(2)).readTimeout(Duration.ofSeconds(2)).build());

        assertThat(transport.send(TestEmails.several(), "email-order-102")).isInstanceOf(SendResult.Sent.class);

        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).as("one copy per RCPT: 2 to, 1 cc, 1 bcc").hasSize(4);
        for (String address : new String[]{"ann@example.com", "bo@example.com", "carl@corp.example", "dora@audit.example"}) {
            assertThat(greenMail.getUserManager().getUserByEmail(address)).as(address + " got it").isNotNull();
        }
        MimeMessage m = received[0];
        assertThat(Arrays.stream(m.getRecipients(Message.RecipientType.TO)).map(a -> ((InternetAddress) a).getAddress()))
                .containsExactly("ann@example.com", "bo@example.com");
        assertThat(((InternetAddress) m.getRecipients(Message.RecipientType.CC)[0]).getAddress()).isEqualTo("carl@corp.example");
        for (MimeMessage copy : received) {
            assertThat(copy.getHeader("Bcc")).as("Bcc is in no header of any copy").isNull();
            assertThat(copy.getRecipients(Message.RecipientType.BCC)).isNull();
            assertThat(copy.getHeader("X-Mailroom-Tag")).containsExactly("category=invoice", "plan=pro");
            // one transaction, so one envelope sender: the VERP address of the email's key for every recipient
            assertThat(copy.getHeader("Return-Path")).containsExactly("<bounces+mvwwc2lmfvxxezdfoiwtcmbs@example.com>");
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void theEnvelopeNamesEveryRecipientOnce_pipelinedOrNot(boolean pipelining) throws Exception {
        scripted = ScriptedSmtpServer.start();
        scripted.pipelining = pipelining;
        transport = new SmtpTransport(SmtpTransportTest.config(scripted.port()).build());

        assertThat(transport.send(TestEmails.several(), "email-order-102")).isInstanceOf(SendResult.Sent.class);

        assertThat(scripted.commands.stream().filter(c -> c.startsWith("RCPT TO:")).toList()).containsExactly(
                "RCPT TO:<ann@example.com>", "RCPT TO:<bo@example.com>", "RCPT TO:<carl@corp.example>", "RCPT TO:<dora@audit.example>");
        assertThat(scripted.count("MAIL")).isEqualTo(1);
    }
}
