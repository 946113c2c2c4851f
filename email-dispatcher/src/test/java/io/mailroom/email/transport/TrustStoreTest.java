package io.mailroom.email.transport;

import io.mailroom.email.TestEmails;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.email.transport.smtp.SmtpSecurity;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Loading a truststore ({@code MAILROOM_*_TRUSTSTORE} in the service): each mistake is refused at start-up with the setting named. */
class TrustStoreTest {

    static final String SETTING = "MAILROOM_SMTP_TRUSTSTORE";

    @TempDir
    static Path dir;
    static TestCertificates.Issued issued;

    @BeforeAll
    static void issue() {
        issued = TestCertificates.selfSigned(dir, "loopback", "dns:localhost,ip:127.0.0.1");
    }

    static TrustStore load(Path file, String password, TrustStore.Type type) {
        return TrustStore.load(SETTING, file, password, type);
    }

    static void assertRejected(Runnable read, String setting, String... fragments) {
        assertThatThrownBy(read::run).isInstanceOf(InvalidSettingException.class)
                .satisfies(e -> assertThat(((InvalidSettingException) e).setting()).isEqualTo(setting))
                .hasMessageContaining(setting)
                .satisfies(e -> assertThat(e.getMessage()).contains(fragments));
    }

    @Test
    void unsetMeansTheJdkDefaultsAndEachFormatReads() {
        TrustStore p12 = load(issued.trustStore(), TestCertificates.TRUST_STORE_PASSWORD, TrustStore.Type.PKCS12);
        assertThat(p12.type()).isEqualTo(TrustStore.Type.PKCS12);
        assertThat(p12.certificates()).isEqualTo(1);
        assertThat(p12.toString()).contains(issued.trustStore().toString()).doesNotContain(TestCertificates.TRUST_STORE_PASSWORD);
        TrustStore pem = load(issued.certificatePem(), null, TrustStore.Type.PEM);
        assertThat(pem.certificates()).isEqualTo(1);
    }

    @Test
    void aMissingFileAWrongPasswordOrAWrongTypeIsRefusedNamingTheSetting() throws IOException {
        assertRejected(() -> load(dir.resolve("nope.p12"), null, TrustStore.Type.PKCS12), SETTING, "no readable file", "nope.p12");
        assertRejected(() -> load(issued.trustStore(), "wrong", TrustStore.Type.PKCS12),
                SETTING + "_PASSWORD", "does not open");
        assertRejected(() -> load(issued.trustStore(), null, TrustStore.Type.PKCS12), SETTING, "holds no certificates", SETTING + "_PASSWORD");
        assertRejected(() -> load(issued.certificatePem(), null, TrustStore.Type.PKCS12), SETTING, "cannot be read as PKCS12");
        assertRejected(() -> load(issued.trustStore(), null, TrustStore.Type.PEM), SETTING, "not a PEM file");
        Path text = Files.writeString(dir.resolve("notes.txt"), "not a certificate");
        assertRejected(() -> load(text, null, TrustStore.Type.PEM), SETTING, "not a PEM file");
    }

    @Test
    void aTrustStoreWithoutTlsIsAConflict() {
        TrustStore trust = TrustStore.load(SETTING, issued.certificatePem(), null, TrustStore.Type.PEM);
        assertRejected(() -> SmtpConfig.builder().from(TestEmails.SHOP).security(SmtpSecurity.NONE).trustStore(trust).build(),
                "MAILROOM_SMTP_TRUSTSTORE", "MAILROOM_SMTP_SECURITY=NONE");
        assertRejected(() -> HttpMailConfig.of(URI.create("http://127.0.0.1:8080"), "tok").withTrustStore(trust),
                "MAILROOM_HTTP_TRUSTSTORE", "not an https URL");
        assertThat(SmtpConfig.builder().from(TestEmails.SHOP).trustStore(trust).build().toString())
                .contains("trustStore=" + issued.certificatePem());
    }
}
