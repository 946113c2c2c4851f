package io.mailroom.email.dkim;

import io.mailroom.email.transport.TestCertificates;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.testing.DkimVerifier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Keys are read when the configuration is built; one that cannot be used refuses start naming the setting and the file. */
class DkimKeysTest {

    @TempDir
    Path dir;

    static final String SETTING = DkimSettings.SETTING;

    DkimKey load(DkimAlgorithm algorithm, Path file, String password) {
        return DkimKeys.load(SETTING, "shop.example", "s1", algorithm, file.toString(), password);
    }

    @Test
    void rsaAndEd25519PemKeysGiveTheirPublicKeys() throws Exception {
        KeyPair rsa = DkimVerifier.newKeyPair("RSA");
        KeyPair ed = DkimVerifier.newKeyPair("Ed25519");

        DkimKey rsaKey = load(DkimAlgorithm.RSA_SHA256, DkimVerifier.writePem(rsa.getPrivate(), dir.resolve("rsa.pem")), null);
        DkimKey edKey = load(DkimAlgorithm.ED25519_SHA256, DkimVerifier.writePem(ed.getPrivate(), dir.resolve("ed.pem")), null);

        // the public halves, derived from the private keys alone, are the generator's
        assertThat(rsaKey.publicKey().getEncoded()).isEqualTo(rsa.getPublic().getEncoded());
        assertThat(edKey.publicKey().getEncoded()).isEqualTo(ed.getPublic().getEncoded());
        assertThat(rsaKey.txtRecord()).isEqualTo(DkimVerifier.txtRecord(rsa.getPublic()));
        assertThat(edKey.txtRecord()).isEqualTo(DkimVerifier.txtRecord(ed.getPublic()));
        assertThat(Base64.getDecoder().decode(edKey.publishedKey())).hasSize(32);
        assertThat(edKey.recordName()).isEqualTo("s1._domainkey.shop.example");
        assertThat(edKey.toString()).isEqualTo("shop.example:s1:ed25519-sha256:" + dir.resolve("ed.pem")).doesNotContain("PRIVATE");
    }

    @Test
    void theReadmesOpensslCommandsGiveTheRecordTheServiceComputes() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/openssl")), "skipped: /usr/bin/openssl is not installed");
        Path ed = dir.resolve("ed.pem");
        Path rsa = dir.resolve("rsa.pem");
        sh("openssl genpkey -algorithm ed25519 -out " + ed);
        sh("openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048 -out " + rsa);

        String edPublished = sh("openssl pkey -in " + ed + " -pubout -outform DER | tail -c 32 | base64");
        String rsaPublished = sh("openssl pkey -in " + rsa + " -pubout -outform DER | base64 -w0");

        assertThat(load(DkimAlgorithm.ED25519_SHA256, ed, null).publishedKey()).isEqualTo(edPublished);
        assertThat(load(DkimAlgorithm.RSA_SHA256, rsa, null).publishedKey()).isEqualTo(rsaPublished);
    }

    @Test
    void aMissingFileRefusesStartNamingTheSettingAndTheFile() {
        Path missing = dir.resolve("nope.pem");
        assertThatThrownBy(() -> load(DkimAlgorithm.RSA_SHA256, missing, null))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo(SETTING))
                .hasMessageContaining(SETTING).hasMessageContaining(missing.toString()).hasMessageContaining("cannot be read");
    }

    @Test
    void aFileInAnotherFormatRefusesStartSayingHowToConvertIt() throws Exception {
        Path pkcs1 = Files.writeString(dir.resolve("old.pem"), "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n");
        Path text = Files.writeString(dir.resolve("text.pem"), "not a key");
        Path garbage = Files.writeString(dir.resolve("garbage.pem"), "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");

        assertThatThrownBy(() -> load(DkimAlgorithm.RSA_SHA256, pkcs1, null)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining(pkcs1.toString()).hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
        assertThatThrownBy(() -> load(DkimAlgorithm.RSA_SHA256, text, null)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining(text.toString()).hasMessageContaining("BEGIN PRIVATE KEY");
        assertThatThrownBy(() -> load(DkimAlgorithm.RSA_SHA256, garbage, null)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining(garbage.toString()).hasMessageContaining("neither RSA nor Ed25519");
    }

    @Test
    void aKeyOfTheOtherAlgorithmRefusesStart() throws Exception {
        Path ed = DkimVerifier.writePem(DkimVerifier.newKeyPair("Ed25519").getPrivate(), dir.resolve("ed.pem"));

        assertThatThrownBy(() -> load(DkimAlgorithm.RSA_SHA256, ed, null)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining(ed.toString()).hasMessageContaining("rsa-sha256 is configured");
    }

    @Test
    void aPkcs12KeystoreIsReadWithItsPasswordAndAWrongPasswordRefusesStart() {
        TestCertificates.Issued issued = TestCertificates.selfSigned(dir, "dkim", "dns:localhost");

        DkimKey key = load(DkimAlgorithm.RSA_SHA256, issued.keyStore(), TestCertificates.KEY_STORE_PASSWORD);
        assertThat(key.publishedKey()).isNotBlank();
        assertThat(DkimKeys.load(SETTING, "shop.example", "s1", DkimAlgorithm.RSA_SHA256, issued.keyStore() + "#server",
                TestCertificates.KEY_STORE_PASSWORD).publicKey()).isEqualTo(key.publicKey());

        assertThatThrownBy(() -> load(DkimAlgorithm.RSA_SHA256, issued.keyStore(), "wrong"))
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining(issued.keyStore().toString())
                .hasMessageContaining("password is wrong");
        assertThatThrownBy(() -> DkimKeys.load(SETTING, "shop.example", "s1", DkimAlgorithm.RSA_SHA256, issued.keyStore() + "#other",
                TestCertificates.KEY_STORE_PASSWORD)).isInstanceOf(InvalidSettingException.class).hasMessageContaining("no key entry 'other'");
    }

    @Test
    void keysArePickedByFromDomainOrItsClosestParent() throws Exception {
        DkimKey shop = load(DkimAlgorithm.RSA_SHA256, DkimVerifier.writePem(DkimVerifier.newKeyPair("RSA").getPrivate(), dir.resolve("a.pem")), null);
        DkimSettings settings = new DkimSettings(List.of(shop), DkimSettings.DnsCheck.REFUSE);

        assertThat(settings.keysFor("shop.example")).containsExactly(shop);
        assertThat(settings.keysFor("Mail.Shop.Example")).containsExactly(shop);
        assertThat(settings.keysFor("other.example")).isEmpty();
        assertThat(settings.keysFor("example")).isEmpty();
        assertThatThrownBy(() -> new DkimSettings(List.of(shop, shop), DkimSettings.DnsCheck.REFUSE))
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("two rsa-sha256 keys for shop.example");
    }

    private static String sh(String command) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
