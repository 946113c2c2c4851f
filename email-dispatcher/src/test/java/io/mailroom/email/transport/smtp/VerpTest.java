package io.mailroom.email.transport.smtp;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import io.mailroom.outbox.InvalidSettingException;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code MAILROOM_SMTP_VERP}: the envelope sender carries the idempotency key, and decodes back to it. */
class VerpTest {

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort())
            .withPerMethodLifecycle(true);

    private final Verp verp = Verp.parse("bounces+{key}@shop.example");

    @ParameterizedTest
    @ValueSource(strings = {"email-order-102", "a", "Order/102 résumé@x+y", "with space\tand\"quotes\"", "日本語-キー",
            "----", "email.order.1.resend-2", "UPPER lower", "😀"})
    void awkwardKeysRoundTrip(String key) {
        String address = verp.addressFor(key);

        assertThat(address).matches("bounces\\+[a-z2-7]+@shop\\.example");
        assertThat(verp.keyOf(address)).isEqualTo(key);
        assertThat(verp.keyOf("<" + address + ">")).isEqualTo(key);
        // A mail server that changes the local part's case does not lose the key.
        assertThat(verp.keyOf(address.toUpperCase(Locale.ROOT))).isEqualTo(key);
    }

    @Test
    void knownEncodingIsRfc4648Base32LowerCaseUnpadded() {
        // RFC 4648 section 10: BASE32("foobar") = "MZXW6YTBOI======"
        assertThat(Verp.encode("foobar")).isEqualTo("mzxw6ytboi");
        assertThat(Verp.decode("mzxw6ytboi")).isEqualTo("foobar");
        assertThat(verp.addressFor("order-102-confirmation")).isEqualTo("bounces+n5zgizlsfuytamrnmnxw4ztjojwwc5djn5xa@shop.example");
    }

    @Test
    void addressesThatAreNotOursCarryNoKey() {
        assertThat(verp.keyOf("bounces@shop.example")).isNull();
        assertThat(verp.keyOf("bounces+mzxw6ytboi@other.example")).isNull();
        assertThat(verp.keyOf("returns+mzxw6ytboi@shop.example")).isNull();
        assertThat(verp.keyOf("bounces+not-base32!@shop.example")).isNull();
        assertThat(verp.keyOf("bounces+mzxw6ytboj@shop.example")).as("non-zero padding bits").isNull();
        assertThat(verp.keyOf(null)).isNull();
    }

    @Test
    void aKeyTooLongForALocalPartGoesOutFromThePlainAddress() {
        String longKey = "k".repeat(40);

        assertThat(verp.addressFor(longKey)).isEqualTo("bounces@shop.example");
        assertThat(verp.plainAddress()).isEqualTo("bounces@shop.example");
    }

    @Test
    void badTemplatesAreRejectedNamingTheSetting() {
        for (String bad : new String[]{"bounces@shop.example", "{key}@shop.example@x", "b+{key}{key}@shop.example",
                "bounces@{key}.example", "bö+{key}@shop.example", "{key}@shop.example"}) {
            assertThatThrownBy(() -> Verp.parse(bad)).as(bad)
                    .isInstanceOf(InvalidSettingException.class).hasMessageContaining("MAILROOM_SMTP_VERP");
        }
        SmtpConfig config = SmtpConfig.builder().from(EmailAddress.of("bounces@shop.example"))
                .verp(Verp.parse("bounces+{key}@shop.example")).build();
        assertThat(config.verp().toString()).isEqualTo("bounces+{key}@shop.example");
        assertThat(config.toString()).contains("verp=bounces+{key}@shop.example");
        assertThat(SmtpConfig.builder().from(EmailAddress.of("bounces@shop.example")).build().verp()).isNull();
    }

    @Test
    void mailFromCarriesTheVerpAddressOfEachEmailsKey() throws Exception {
        try (SmtpTransport transport = new SmtpTransport(SmtpConfig.builder()
                .host("127.0.0.1").port(greenMail.getSmtp().getPort()).security(SmtpSecurity.NONE)
                .from(EmailAddress.of("bounces@shop.example")).verp(verp)
                .connectTimeout(Duration.ofSeconds(2)).readTimeout(Duration.ofSeconds(2)).build(), java.time.Clock.systemUTC())) {
            assertThat(transport.send(TestEmails.sample(), "email-order-102")).isInstanceOf(SendResult.Sent.class);
            assertThat(transport.send(TestEmails.sample(), "email:order/103?x=\"y\"&z")).isInstanceOf(SendResult.Sent.class);
        }

        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).hasSize(2);
        // GreenMail records MAIL FROM as Return-Path.
        String first = received[0].getHeader("Return-Path")[0];
        String second = received[1].getHeader("Return-Path")[0];
        assertThat(first).isEqualTo("<" + verp.addressFor("email-order-102") + ">");
        assertThat(verp.keyOf(first)).isEqualTo("email-order-102");
        assertThat(verp.keyOf(second)).isEqualTo("email:order/103?x=\"y\"&z");
        // The From header is the email's own, untouched.
        assertThat(received[0].getFrom()[0].toString()).doesNotContain("bounces+");
    }
}
