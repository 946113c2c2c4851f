package io.mailroom.email.transport.http;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import io.mailroom.email.transport.TestCertificates;
import io.mailroom.email.transport.TrustStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code MAILROOM_HTTP_TRUSTSTORE}: an HTTPS provider (WireMock) with a self-signed certificate is a
 * TLS failure by default, works with the certificate in the truststore, and is still refused when the
 * trusted certificate names another host.
 */
class HttpTrustStoreTest {

    static final String PATH = "/v1/emails";

    @TempDir
    static Path dir;
    static TestCertificates.Issued forLoopback;
    static TestCertificates.Issued forOtherHost;
    static WireMockServer loopback;
    static WireMockServer otherHost;

    @BeforeAll
    static void start() {
        forLoopback = TestCertificates.selfSigned(dir, "loopback", "dns:localhost,ip:127.0.0.1");
        forOtherHost = TestCertificates.selfSigned(dir, "other", "dns:api.other.example");
        loopback = https(forLoopback);
        otherHost = https(forOtherHost);
    }

    @AfterAll
    static void stop() {
        loopback.stop();
        otherHost.stop();
    }

    static WireMockServer https(TestCertificates.Issued certificate) {
        WireMockServer server = new WireMockServer(WireMockConfiguration.options().bindAddress("127.0.0.1").httpDisabled(true)
                .dynamicHttpsPort().keystorePath(certificate.keyStore().toString()).keystoreType("PKCS12")
                .keystorePassword(TestCertificates.KEY_STORE_PASSWORD).keyManagerPassword(TestCertificates.KEY_STORE_PASSWORD)
                .containerThreads(8).jettyAcceptors(1));
        server.start();
        server.stubFor(post(urlEqualTo(PATH)).willReturn(okJson("{\"id\":\"msg_tls\"}")));
        return server;
    }

    static URI baseUrl(WireMockServer server) {
        return URI.create("https://127.0.0.1:" + server.httpsPort());
    }

    static HttpMailConfig config(WireMockServer server) {
        return HttpMailConfig.of(baseUrl(server), "tok").withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(20)); // a TLS handshake on a busy machine
    }

    @Test
    void withoutTheTrustStoreASelfSignedProviderIsATlsFailure() {
        loopback.resetRequests(); // the server is shared by the class: count only this test's requests
        try (HttpMailTransport t = new HttpMailTransport(config(loopback))) {
            SendResult result = t.send(TestEmails.sample(), "email-tls-1");

            assertThat(result).isInstanceOf(SendResult.Transient.class);
            SendResult.Transient failure = (SendResult.Transient) result;
            assertThat(failure.code()).isEqualTo("http-tls");
            assertThat(failure.scope()).isEqualTo(SendResult.Scope.PROVIDER);
            assertThat(failure.error()).contains("MAILROOM_HTTP_TRUSTSTORE");
        }
        loopback.verify(0, postRequestedFor(urlEqualTo(PATH)));
    }

    @Test
    void withTheCertificateAsPemInTheConfiguredTrustStoreTheEmailIsSent() {
        HttpMailConfig config = HttpMailConfig.of(baseUrl(loopback), "tok")
                .withTimeouts(java.time.Duration.ofSeconds(20), java.time.Duration.ofSeconds(20))
                .withTrustStore(TrustStore.load("MAILROOM_HTTP_TRUSTSTORE", forLoopback.certificatePem(), null, TrustStore.Type.PEM));
        assertThat(config.trustStore().type()).isEqualTo(TrustStore.Type.PEM);
        try (HttpMailTransport t = new HttpMailTransport(config)) {
            SendResult result = t.send(TestEmails.sample(), "email-tls-2");

            assertThat(result).isInstanceOf(SendResult.Sent.class);
            assertThat(((SendResult.Sent) result).providerMessageId()).isEqualTo("msg_tls");
        }
        loopback.verify(1, postRequestedFor(urlEqualTo(PATH)));
    }

    @Test
    void overHttpsAutoTakesHttp2WhenTheProviderOffersItAndVersion11DoesNot() {
        TrustStore trust = TrustStore.load("MAILROOM_HTTP_TRUSTSTORE", forLoopback.trustStore(), TestCertificates.TRUST_STORE_PASSWORD,
                TrustStore.Type.PKCS12);
        try {
            try (HttpMailTransport t = new HttpMailTransport(config(loopback).withTrustStore(trust))) {
                assertThat(t.send(TestEmails.sample(), "email-alpn-auto")).isInstanceOf(SendResult.Sent.class);
            }
            try (HttpMailTransport t = new HttpMailTransport(config(loopback).withTrustStore(trust).withVersion(HttpMailConfig.Version.HTTP_1_1))) {
                assertThat(t.send(TestEmails.sample(), "email-alpn-11")).isInstanceOf(SendResult.Sent.class);
            }
            // WireMock offers h2 by ALPN
            assertThat(protocolOf("email-alpn-auto")).isEqualTo("HTTP/2.0");
            assertThat(protocolOf("email-alpn-11")).isEqualTo("HTTP/1.1");
        } finally {
            loopback.resetRequests(); // the other tests count this server's requests
        }
    }

    static String protocolOf(String key) {
        return loopback.getAllServeEvents().stream().filter(e -> key.equals(e.getRequest().getHeader("Idempotency-Key")))
                .map(e -> e.getRequest().getProtocol()).findFirst().orElse("(not received)");
    }

    @Test
    void aTrustedCertificateIssuedForAnotherHostIsStillRefused() {
        TrustStore trust = TrustStore.load("MAILROOM_HTTP_TRUSTSTORE", forOtherHost.trustStore(), TestCertificates.TRUST_STORE_PASSWORD,
                TrustStore.Type.PKCS12);
        try (HttpMailTransport t = new HttpMailTransport(config(otherHost).withTrustStore(trust))) {
            SendResult result = t.send(TestEmails.sample(), "email-tls-3");

            assertThat(result).isInstanceOf(SendResult.Transient.class);
            assertThat(((SendResult.Transient) result).code()).isEqualTo("http-tls");
            // trusted, so only the host name check can have refused it
            assertThat(((SendResult.Transient) result).error()).contains("CertificateException");
        }
        otherHost.verify(0, postRequestedFor(urlEqualTo(PATH)));
    }
}
