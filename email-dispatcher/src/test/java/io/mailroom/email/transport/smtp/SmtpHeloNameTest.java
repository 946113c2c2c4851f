package io.mailroom.email.transport.smtp;

import io.mailroom.outbox.InvalidSettingException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code MAILROOM_SMTP_HELO_NAME}: what the EHLO says, its default, and what is refused. */
class SmtpHeloNameTest {

    private static SmtpConfig fromEnv(String helo) {
        return SmtpConfig.builder().from(io.mailroom.email.EmailAddress.parseMailbox("Shop <shop@shop.example>"))
                .messageIdDomain("mail.shop.example").heloName(helo).build();
    }

    @ParameterizedTest
    @ValueSource(strings = {"mailer.shop.example", "Mailer-1.Shop.Example", "mailer.shop.example.", "[192.0.2.1]", "[IPv6:2001:db8::1]"})
    void aHostNameOrAnAddressLiteralIsTakenAndGoesToAngus(String helo) {
        SmtpConfig c = fromEnv(helo);
        assertThat(c.heloName()).isEqualTo(helo);
        assertThat(SmtpTransport.sessionProperties(c).getProperty("mail.smtp.localhost")).isEqualTo(helo);
        assertThat(c.toString()).contains("heloName=" + helo);
    }

    @ParameterizedTest
    @ValueSource(strings = {"mailer shop", "mailer_shop.example", "-mailer.example", "192.0.2.1]", "[999.1]", "a\r\nRCPT TO:<x@y.z>"})
    void anythingElseIsRefusedNamingTheSetting(String helo) {
        assertThatThrownBy(() -> fromEnv(helo)).isInstanceOfSatisfying(InvalidSettingException.class,
                e -> assertThat(e.setting()).isEqualTo("MAILROOM_SMTP_HELO_NAME"));
    }

    @Test
    void unsetItIsThisMachinesFullyQualifiedNameElseTheMessageIdDomain() {
        assertThat(SmtpConfig.defaultHeloName("build-7.ci.shop.example", "mail.shop.example")).isEqualTo("build-7.ci.shop.example");
        assertThat(SmtpConfig.defaultHeloName("build-7", "mail.shop.example")).as("no dot").isEqualTo("mail.shop.example");
        assertThat(SmtpConfig.defaultHeloName("localhost", "mail.shop.example")).isEqualTo("mail.shop.example");
        assertThat(SmtpConfig.defaultHeloName("localhost.localdomain", "mail.shop.example")).isEqualTo("mail.shop.example");
        assertThat(SmtpConfig.defaultHeloName("10.0.0.7", "mail.shop.example")).as("an IP").isEqualTo("mail.shop.example");
        assertThat(SmtpConfig.defaultHeloName(null, "mail.shop.example")).isEqualTo("mail.shop.example");
        assertThat(fromEnv(null).heloName()).as("never localhost").contains(".").doesNotStartWith("localhost");
    }
}
