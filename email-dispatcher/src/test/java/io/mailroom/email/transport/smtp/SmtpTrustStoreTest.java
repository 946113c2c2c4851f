package io.mailroom.email.transport.smtp;

import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import io.mailroom.email.transport.TestCertificates;
import io.mailroom.email.transport.TrustStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code MAILROOM_SMTP_TRUSTSTORE}: a server with a self-signed certificate is refused as a TLS
 * failure by default, accepted with the certificate in the truststore, and still refused when the
 * trusted certificate was issued for another host (the host name check stays on). For implicit
 * TLS and STARTTLS, against a scripted server speaking real TLS.
 */
class SmtpTrustStoreTest {

    @TempDir
    static Path dir;
    static TestCertificates.Issued forLoopback;
    static TestCertificates.Issued forOtherHost;

    ScriptedSmtpServer server;
    SmtpTransport transport;

    @BeforeAll
    static void issueCertificates() {
        forLoopback = TestCertificates.selfSigned(dir, "loopback", "dns:localhost,ip:127.0.0.1");
        forOtherHost = TestCertificates.selfSigned(dir, "other", "dns:smtp.other.example");
    }

    @AfterEach
    void stop() throws IOException {
        if (transport != null) {
            transport.close();
        }
        server.close();
    }

    static ScriptedSmtpServer start(SmtpSecurity security, TestCertificates.Issued certificate) throws IOException {
        return security == SmtpSecurity.TLS
                ? ScriptedSmtpServer.startImplicitTls(certificate.serverContext())
                : ScriptedSmtpServer.startStartTls(certificate.serverContext());
    }

    /** Timeouts long enough for a TLS handshake on a busy machine. */
    static SmtpConfig.Builder tlsConfig(int port, SmtpSecurity security) {
        return SmtpTransportTest.config(port).security(security).connectTimeout(Duration.ofSeconds(20)).readTimeout(Duration.ofSeconds(20));
    }

    static TrustStore trusting(TestCertificates.Issued certificate) {
        return TrustStore.load("MAILROOM_SMTP_TRUSTSTORE", certificate.trustStore(), TestCertificates.TRUST_STORE_PASSWORD,
                TrustStore.Type.PKCS12);
    }

    @ParameterizedTest
    @EnumSource(value = SmtpSecurity.class, names = {"TLS", "STARTTLS"})
    void withoutTheTrustStoreASelfSignedServerIsATlsFailure(SmtpSecurity security) throws IOException {
        server = start(security, forLoopback);
        transport = new SmtpTransport(tlsConfig(server.port(), security).build());

        SendResult result = transport.send(TestEmails.sample(), "email-tls-1");

        assertThat(result).isInstanceOf(SendResult.Transient.class);
        SendResult.Transient t = (SendResult.Transient) result;
        assertThat(t.code()).isEqualTo("smtp-tls");
        assertThat(t.scope()).isEqualTo(SendResult.Scope.PROVIDER);
        assertThat(t.error()).contains("MAILROOM_SMTP_TRUSTSTORE");
        assertThat(server.connections.get()).isEqualTo(1);
        assertThat(server.count("MAIL")).isZero();
    }

    @ParameterizedTest
    @EnumSource(value = SmtpSecurity.class, names = {"TLS", "STARTTLS"})
    void withTheCertificateInTheConfiguredTrustStoreTheEmailIsSent(SmtpSecurity security) throws IOException {
        server = start(security, forLoopback);
        SmtpConfig config = SmtpConfig.builder().host("127.0.0.1").port(server.port()).security(security)
                .from(io.mailroom.email.EmailAddress.of("shop@example.com"))
                .trustStore(TrustStore.load("MAILROOM_SMTP_TRUSTSTORE", forLoopback.trustStore(),
                        TestCertificates.TRUST_STORE_PASSWORD, TrustStore.Type.PKCS12)).build();
        assertThat(config.trustStore().certificates()).isEqualTo(1);
        transport = new SmtpTransport(config);

        SendResult result = transport.send(TestEmails.sample(), "email-tls-2");

        assertThat(result).isInstanceOf(SendResult.Sent.class);
        assertThat(server.messagesCompleted.get()).isEqualTo(1);
        if (security == SmtpSecurity.STARTTLS) {
            assertThat(server.count("STARTTLS")).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(value = SmtpSecurity.class, names = {"TLS", "STARTTLS"})
    void overTlsTheEnvelopeIsPipelinedToo(SmtpSecurity security) throws IOException {
        server = start(security, forLoopback);
        server.pipelining = true;
        transport = new SmtpTransport(tlsConfig(server.port(), security).trustStore(trusting(forLoopback)).build());

        assertThat(transport.send(TestEmails.sample(), "email-tls-4")).isInstanceOf(SendResult.Sent.class);
        assertThat(transport.send(TestEmails.sample(), "email-tls-5")).isInstanceOf(SendResult.Sent.class);

        // after STARTTLS the stream Angus writes to is a new one; each envelope still came in one read
        assertThat(server.batches()).containsSubsequence(PipelinedSmtpTransportTest.ENVELOPE, PipelinedSmtpTransportTest.ENVELOPE);
        assertThat(server.messagesCompleted.get()).isEqualTo(2);
        assertThat(server.connections.get()).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(value = SmtpSecurity.class, names = {"TLS", "STARTTLS"})
    void aTrustedCertificateIssuedForAnotherHostIsStillRefused(SmtpSecurity security) throws IOException {
        server = start(security, forOtherHost);
        transport = new SmtpTransport(tlsConfig(server.port(), security)
                .trustStore(trusting(forOtherHost)).build());

        SendResult result = transport.send(TestEmails.sample(), "email-tls-3");

        assertThat(result).isInstanceOf(SendResult.Transient.class);
        assertThat(((SendResult.Transient) result).code()).isEqualTo("smtp-tls");
        // trusted, so only the host name check can have refused it (the JDK's CertificateException
        // "No subject alternative names matching ..."), and no second connection with other trust
        assertThat(((SendResult.Transient) result).error()).contains("CertificateException");
        assertThat(server.connections.get()).isEqualTo(1);
        assertThat(server.count("MAIL")).isZero();
        assertThat(server.messagesCompleted.get()).isZero();
    }
}
