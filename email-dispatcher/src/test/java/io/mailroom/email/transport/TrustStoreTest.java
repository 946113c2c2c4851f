package io.mailroom.email.transport;

import io.mailroom.email.TestEmails;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.email.config.Settings;
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

/** Reading {@code MAILROOM_*_TRUSTSTORE}: each mistake is refused at start-up with the variable named. */
class TrustStoreTest {

    static final String SETTING = "MAILROOM_SMTP_TRUSTSTORE";

    @TempDir
    static Path dir;
    static TestCertificates.Issued issued;

    @BeforeAll
    static void issue() {
        issued = TestCertificates.selfSigned(dir, "loopback", "dns:localhost,ip:127.0.0.1");
    }

    static TrustStore fromEnv(String... pairs) {
        Map<String, String> env = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return TrustStore.fromEnv(new Settings(env), SETTING);
    }

    static void assertRejected(Runnable read, String setting, String... fragments) {
        assertThatThrownBy(read::run).isInstanceOf(InvalidSettingException.class)
                .satisfies(e -> assertThat(((InvalidSettingException) e).setting()).isEqualTo(setting))
                .hasMessageContaining(setting)
                .satisfies(e -> assertThat(e.getMessage()).contains(fragments));
    }

    @Test
    void unsetMeansTheJdkDefaultsAndEachFormatReads() {
        assertThat(fromEnv()).isNull();
        TrustStore p12 = fromEnv(SETTING, issued.trustStore().toString(), SETTING + "_PASSWORD", TestCertificates.TRUST_STORE_PASSWORD);
        assertThat(p12.type()).isEqualTo(TrustStore.Type.PKCS12);
        assertThat(p12.certificates()).isEqualTo(1);
        assertThat(p12.toString()).contains(issued.trustStore().toString()).doesNotContain(TestCertificates.TRUST_STORE_PASSWORD);
        TrustStore pem = fromEnv(SETTING, issued.certificatePem().toString(), SETTING + "_TYPE", "pem");
        assertThat(pem.certificates()).isEqualTo(1);
    }

    @Test
    void aMissingFileAWrongPasswordOrAWrongTypeIsRefusedNamingTheSetting() throws IOException {
        assertRejected(() -> fromEnv(SETTING, dir.resolve("nope.p12").toString()), SETTING, "no readable file", "nope.p12");
        assertRejected(() -> fromEnv(SETTING, issued.trustStore().toString(), SETTING + "_PASSWORD", "wrong"),
                SETTING + "_PASSWORD", "does not open");
        assertRejected(() -> fromEnv(SETTING, issued.trustStore().toString()), SETTING, "holds no certificates", SETTING + "_PASSWORD");
        assertRejected(() -> fromEnv(SETTING, issued.certificatePem().toString()), SETTING, "cannot be read as PKCS12");
        assertRejected(() -> fromEnv(SETTING, issued.trustStore().toString(), SETTING + "_TYPE", "pem"), SETTING, "not a PEM file");
        Path text = Files.writeString(dir.resolve("notes.txt"), "not a certificate");
        assertRejected(() -> fromEnv(SETTING, text.toString(), SETTING + "_TYPE", "PEM"), SETTING, "not a PEM file");
        assertRejected(() -> fromEnv(SETTING, issued.trustStore().toString(), SETTING + "_TYPE", "p7b"), SETTING + "_TYPE", "PKCS12");
        assertRejected(() -> fromEnv(SETTING + "_PASSWORD", "secret"), SETTING + "_PASSWORD", "is set but " + SETTING + " is not");
    }

    @Test
    void aTrustStoreWithoutTlsIsAConflict() {
        TrustStore trust = TrustStore.load(SETTING, issued.certificatePem(), null, TrustStore.Type.PEM);
        assertRejected(() -> SmtpConfig.builder().from(TestEmails.SHOP).security(SmtpSecurity.NONE).trustStore(trust).build(),
                "MAILROOM_SMTP_TRUSTSTORE", "MAILROOM_SMTP_SECURITY=NONE");
        assertRejected(() -> HttpMailConfig.of(URI.create("http://127.0.0.1:8080"), "tok").withTrustStore(trust),
                "MAILROOM_HTTP_TRUSTSTORE", "not an https URL");
        assertThat(SmtpConfig.fromEnv(Map.of("MAILROOM_SMTP_FROM", "shop@example.com",
                "MAILROOM_SMTP_TRUSTSTORE", issued.certificatePem().toString(), "MAILROOM_SMTP_TRUSTSTORE_TYPE", "PEM")).toString())
                .contains("trustStore=" + issued.certificatePem());
    }
}
