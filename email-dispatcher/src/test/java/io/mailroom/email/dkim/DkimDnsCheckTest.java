package io.mailroom.email.dkim;

import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.testing.DkimVerifier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The start-up comparison of configured and published keys, with the DNS lookup injected. */
class DkimDnsCheckTest {

    @TempDir
    Path dir;
    DkimKey rsa;
    DkimKey ed;
    final List<String> asked = new ArrayList<>();

    @BeforeEach
    void keys() throws Exception {
        rsa = DkimKeys.load(DkimSettings.SETTING, "shop.example", "rsa1", DkimAlgorithm.RSA_SHA256,
                DkimVerifier.writePem(DkimVerifier.newKeyPair("RSA").getPrivate(), dir.resolve("rsa.pem")).toString(), null);
        ed = DkimKeys.load(DkimSettings.SETTING, "shop.example", "ed1", DkimAlgorithm.ED25519_SHA256,
                DkimVerifier.writePem(DkimVerifier.newKeyPair("Ed25519").getPrivate(), dir.resolve("ed.pem")).toString(), null);
    }

    TxtLookup published(Map<String, List<String>> records) {
        return name -> {
            asked.add(name);
            return records.getOrDefault(name, List.of());
        };
    }

    @Test
    void publishedKeysThatMatchPass() {
        // a 2048-bit record comes as several strings, joined; spaces inside p= are allowed
        String rsaRecord = rsa.txtRecord();
        String spaced = rsaRecord.substring(0, 60) + " " + rsaRecord.substring(60);
        DkimDnsCheck check = new DkimDnsCheck(published(Map.of(
                "rsa1._domainkey.shop.example", List.of("v=spf1 -all", spaced),
                "ed1._domainkey.shop.example", List.of(ed.txtRecord()))));

        assertThat(check.check(new DkimSettings(List.of(rsa, ed), DkimSettings.DnsCheck.REFUSE)))
                .containsExactly(DkimDnsCheck.Outcome.MATCH, DkimDnsCheck.Outcome.MATCH);
        assertThat(asked).containsExactly("rsa1._domainkey.shop.example", "ed1._domainkey.shop.example");
    }

    @Test
    void aPublishedKeyThatDiffersRefusesStartNamingTheFileAndTheRecordToPublish() {
        DkimDnsCheck check = new DkimDnsCheck(published(Map.of("rsa1._domainkey.shop.example",
                List.of("v=DKIM1; k=rsa; p=" + DkimVerifier.txtRecord(DkimVerifier.newKeyPair("RSA").getPublic()).split("p=")[1]))));

        assertThatThrownBy(() -> check.check(new DkimSettings(List.of(rsa), DkimSettings.DnsCheck.REFUSE)))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo(DkimSettings.SETTING))
                .hasMessageContaining(dir.resolve("rsa.pem").toString())
                .hasMessageContaining("rsa1._domainkey.shop.example")
                .hasMessageContaining(rsa.txtRecord())
                .hasMessageContaining(DkimSettings.DNS_CHECK_SETTING + "=warn");
        // warn: the same finding, and start goes on
        assertThat(check.check(new DkimSettings(List.of(rsa), DkimSettings.DnsCheck.WARN)))
                .containsExactly(DkimDnsCheck.Outcome.MISMATCH);
    }

    @Test
    void noRecordOrNoDnsIsSkipped() {
        assertThat(new DkimDnsCheck(published(Map.of())).check(new DkimSettings(List.of(rsa), DkimSettings.DnsCheck.REFUSE)))
                .containsExactly(DkimDnsCheck.Outcome.NO_RECORD);
        TxtLookup down = name -> {
            throw new IOException("DNS lookup failed", new SocketTimeoutException("timed out"));
        };
        assertThat(new DkimDnsCheck(down).check(new DkimSettings(List.of(rsa, ed), DkimSettings.DnsCheck.REFUSE)))
                .containsExactly(DkimDnsCheck.Outcome.UNREACHABLE, DkimDnsCheck.Outcome.UNREACHABLE);
    }

    @Test
    void offAsksNothing() {
        assertThat(new DkimDnsCheck(published(Map.of())).check(new DkimSettings(List.of(rsa), DkimSettings.DnsCheck.OFF))).isEmpty();
        assertThat(asked).isEmpty();
    }

    @Test
    void severalCharacterStringsOfOneRecordAreJoined() {
        assertThat(JndiTxtLookup.joinStrings("\"v=DKIM1; k=rsa; p=MIIB\" \"IjAN\\\"x\"")).isEqualTo("v=DKIM1; k=rsa; p=MIIBIjAN\"x");
        assertThat(JndiTxtLookup.joinStrings("v=DKIM1; p=abc")).isEqualTo("v=DKIM1; p=abc");
    }
}
