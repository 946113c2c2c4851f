package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.dkim.DkimSettings;
import io.mailroom.email.dkim.TxtLookup;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.testing.DkimVerifier;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * DKIM through the running service: keys from {@code MAILROOM_DKIM_KEYS}, checked against the
 * published records at start (the DNS lookup injected), a receipt signed with RSA and Ed25519 that
 * dkimpy verifies as GreenMail received it, and the settings that refuse start.
 */
class DkimServiceTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    static KeyPair rsa;
    static KeyPair ed25519;

    @TempDir
    Path dir;

    @BeforeAll
    static void keys() {
        String why = DkimVerifier.unavailableReason();
        Assumptions.assumeTrue(why == null, () -> "skipped: dkimpy is needed to verify signatures independently: " + why);
        rsa = DkimVerifier.newKeyPair("RSA");
        ed25519 = DkimVerifier.newKeyPair("Ed25519");
    }

    static Map<String, String> published() {
        return Map.of("mr1._domainkey.example.com", DkimVerifier.txtRecord(rsa.getPublic()),
                "mr2._domainkey.example.com", DkimVerifier.txtRecord(ed25519.getPublic()));
    }

    Map<String, String> env() throws Exception {
        Path rsaPem = DkimVerifier.writePem(rsa.getPrivate(), dir.resolve("mr1.pem"));
        Path edPem = DkimVerifier.writePem(ed25519.getPrivate(), dir.resolve("mr2.pem"));
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_SMTP_VERP", "bounces+{key}@example.com");
        env.put("MAILROOM_DKIM_KEYS", "example.com:mr1:rsa-sha256:" + rsaPem + ", example.com:mr2:ed25519:" + edPem);
        return env;
    }

    @Test
    void aReceiptSentByTheServiceIsSignedTwiceAndDkimpyVerifiesIt() throws Exception {
        List<String> asked = new ArrayList<>();
        TxtLookup dns = name -> {
            asked.add(name);
            return List.of(published().get(name));
        };
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env()), DispatcherListener.NONE, dns)) {
            pg.dsl().transaction(cfg -> new OutboxEnqueuer().enqueue(cfg.dsl(), NewMessage.of(ServiceEnv.TOPIC,
                    "order", "9001", "email-order-9001", ServiceEnv.receipt(9001, "dora@customer.example", "Dora"))));
            await().atMost(Duration.ofSeconds(20)).until(() -> greenMail.getReceivedMessages().length == 1);
        }
        assertThat(asked).containsExactly("mr1._domainkey.example.com", "mr2._domainkey.example.com");

        MimeMessage received = greenMail.getReceivedMessages()[0];
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        received.writeTo(raw);
        DkimVerifier.Result result = DkimVerifier.verify(raw.toByteArray(), published());
        assertThat(result.output().lines().sorted().toList())
                .containsExactly("pass d=example.com s=mr1 a=rsa-sha256", "pass d=example.com s=mr2 a=ed25519-sha256");
        assertThat(received.getHeader("Return-Path")[0]).startsWith("<bounces+");

        String text = raw.toString(StandardCharsets.US_ASCII);
        assertThat(text).contains("Subject: Receipt #9001");
        byte[] changed = text.replace("Subject: Receipt #9001", "Subject: Receipt #9002").getBytes(StandardCharsets.US_ASCII);
        DkimVerifier.Result tampered = DkimVerifier.verify(changed, published());
        assertThat(tampered.passed()).as(tampered.output()).isFalse();
    }

    @Test
    void aPublishedKeyThatDiffersRefusesStartAndNoDnsAnswerDoesNot() throws Exception {
        Map<String, String> env = env();
        String other = DkimVerifier.txtRecord(DkimVerifier.newKeyPair("RSA").getPublic());
        TxtLookup wrong = name -> List.of(name.startsWith("mr1.") ? other : published().get(name));

        assertThatThrownBy(() -> DispatcherService.start(ServiceConfig.fromEnv(env), DispatcherListener.NONE, wrong))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("MAILROOM_DKIM_KEYS"))
                .hasMessageContaining(dir.resolve("mr1.pem").toString()).hasMessageContaining("mr1._domainkey.example.com");

        TxtLookup down = name -> {
            throw new java.io.IOException("no DNS here");
        };
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env), DispatcherListener.NONE, down)) {
            assertThat(service.port()).isPositive();
        }
    }

    @Test
    void anUnreadableKeyOrASenderWithoutKeyRefusesStartNamingIt() throws Exception {
        Map<String, String> env = env();
        Path missing = dir.resolve("gone.pem");
        env.put("MAILROOM_DKIM_KEYS", "example.com:mr1:rsa-sha256:" + missing);
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("MAILROOM_DKIM_KEYS"))
                .hasMessageContaining(missing.toString());

        Map<String, String> wrongPassword = env();
        Path store = DkimVerifier.keytoolPkcs12(dir.resolve("dkim.p12"), "Ed25519", "right-secret");
        wrongPassword.put("MAILROOM_DKIM_KEYS", "example.com:mr1:ed25519:" + store);
        wrongPassword.put("MAILROOM_DKIM_KEYSTORE_PASSWORD", "wrong");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(wrongPassword)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining(store.toString()).hasMessageContaining("password is wrong");
        wrongPassword.put("MAILROOM_DKIM_KEYSTORE_PASSWORD", "right-secret");
        assertThat(ServiceConfig.fromEnv(wrongPassword).smtp().dkim().keys()).hasSize(1);

        Map<String, String> otherSender = env();
        otherSender.put("MAILROOM_TOPICS", "email.news = receipt from=\"News <news@news.example>\"");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(otherSender)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("no key for news.example").hasMessageContaining("topic email.news");

        Map<String, String> badEntry = env();
        badEntry.put("MAILROOM_DKIM_KEYS", "example.com:mr1:rsa-sha1:" + dir.resolve("mr1.pem"));
        assertThatThrownBy(() -> ServiceConfig.fromEnv(badEntry)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("rsa-sha256 or ed25519-sha256");

        Map<String, String> stray = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), 25);
        stray.put(DkimSettings.DNS_CHECK_SETTING, "warn");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(stray)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_DKIM_DNS_CHECK is set but MAILROOM_DKIM_KEYS is not");
        // the effective configuration names the keys' files, never a key
        assertThat(ServiceConfig.fromEnv(env()).toString()).contains("dkim=DkimSettings[keys=[example.com:mr1:rsa-sha256:")
                .doesNotContain("PRIVATE");
    }
}
