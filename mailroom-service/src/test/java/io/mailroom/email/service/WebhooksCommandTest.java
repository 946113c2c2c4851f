package io.mailroom.email.service;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

class WebhooksCommandTest {

    private static String sign(String body, String... args) {
        WebhooksCommand.Sign sign = new WebhooksCommand.Sign();
        sign.stdin = new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8));
        sign.clock = Clock.fixed(Instant.ofEpochSecond(1614265330), ZoneOffset.UTC);
        CommandLine cli = new CommandLine(sign);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        int code = cli.execute(args);
        return code + "\n" + out + err;
    }

    @Test
    void printsTheHeadersAProviderWouldSend_theSpecsVectorIncluded() {
        assertThat(sign("{\"test\": 2432232314}", "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "--id", "msg_p5jXN8AQM9LWM0D4loKWxJek", "-"))
                .isEqualTo("0\nwebhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek\nwebhook-timestamp: 1614265330\n"
                        + "webhook-signature: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=\n");
    }

    @Test
    void aBadSecretIsRefusedWithoutPrintingIt() {
        assertThat(sign("{}", "--secret", "not-a-secret", "-")).startsWith("1\n").contains("whsec_").doesNotContain("not-a-secret");
    }
}
