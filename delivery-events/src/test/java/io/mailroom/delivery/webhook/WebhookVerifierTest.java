package io.mailroom.delivery.webhook;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Real HMAC-SHA256 signatures, the spec's published vector, and every way a request can be wrong. */
class WebhookVerifierTest {

    // The Standard Webhooks specification's test vector (standard-webhooks repository, the reference
    // libraries' "sign" test): this secret, id, timestamp and body give exactly this signature.
    private static final String SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    private static final String SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    private static final long SPEC_TS = 1614265330;
    private static final byte[] SPEC_BODY = "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8);
    private static final String SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    private static final WebhookSecrets SECRETS = WebhookSecrets.of("test", List.of(SPEC_SECRET));
    private static final WebhookSecrets OTHER = WebhookSecrets.of("test", List.of("whsec_" + "b3RoZXItc2VjcmV0LWtleS0xMjM0NTY="));

    private static WebhookVerifier at(long epochSecond) {
        return new WebhookVerifier(Clock.fixed(Instant.ofEpochSecond(epochSecond), ZoneOffset.UTC));
    }

    private static Map<String, String> specHeaders() {
        return new HashMap<>(Map.of("webhook-id", SPEC_ID, "webhook-timestamp", Long.toString(SPEC_TS),
                "webhook-signature", SPEC_SIGNATURE));
    }

    @Test
    void theSpecsTestVectorSignsAndVerifies() {
        assertThat(WebhookVerifier.sign(SECRETS, SPEC_ID, SPEC_TS, SPEC_BODY)).isEqualTo(SPEC_SIGNATURE);
        assertThat(at(SPEC_TS).verify(SECRETS, specHeaders()::get, SPEC_BODY))
                .isEqualTo(new WebhookVerifier.Result.Verified(SPEC_ID, Instant.ofEpochSecond(SPEC_TS)));
    }

    @Test
    void severalSignaturesPassWhenOneIsValid() {
        Map<String, String> h = specHeaders();
        h.put("webhook-signature", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v1a,abc v2,"
                + SPEC_SIGNATURE.substring(3) + " " + SPEC_SIGNATURE + " v1,not-base64!");
        assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Verified.class);
    }

    @Test
    void aSignatureUnderAnyConfiguredSecretPasses_soSecretsRotate() {
        WebhookSecrets both = WebhookSecrets.of("test", List.of("whsec_" + "b3RoZXItc2VjcmV0LWtleS0xMjM0NTY=", SPEC_SECRET));
        assertThat(at(SPEC_TS).verify(both, specHeaders()::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Verified.class);
    }

    @Test
    void aTamperedBodyFails() {
        byte[] tampered = "{\"test\": 2432232315}".getBytes(StandardCharsets.UTF_8);
        assertThat(at(SPEC_TS).verify(SECRETS, specHeaders()::get, tampered))
                .isEqualTo(new WebhookVerifier.Result.NoValidSignature(1));
    }

    @Test
    void aTamperedIdOrTimestampFails() {
        Map<String, String> h = specHeaders();
        h.put("webhook-id", SPEC_ID + "x");
        assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.NoValidSignature.class);
        h = specHeaders();
        h.put("webhook-timestamp", Long.toString(SPEC_TS + 1));
        assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.NoValidSignature.class);
    }

    @Test
    void aWrongSecretFails() {
        assertThat(at(SPEC_TS).verify(OTHER, specHeaders()::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.NoValidSignature.class);
    }

    @Test
    void aTimestampMoreThanFiveMinutesOldOrAheadFails_andOneJustInsidePasses() {
        assertThat(at(SPEC_TS + 301).verify(SECRETS, specHeaders()::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Stale.class);
        assertThat(at(SPEC_TS - 301).verify(SECRETS, specHeaders()::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Stale.class);
        assertThat(at(SPEC_TS + 300).verify(SECRETS, specHeaders()::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Verified.class);
        assertThat(at(SPEC_TS - 300).verify(SECRETS, specHeaders()::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Verified.class);
    }

    @Test
    void missingHeadersAreNamed_andABadTimestampIsRefused() {
        for (String header : List.of("webhook-id", "webhook-timestamp", "webhook-signature")) {
            Map<String, String> h = specHeaders();
            h.remove(header);
            assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).isEqualTo(new WebhookVerifier.Result.MissingHeader(header));
        }
        Map<String, String> h = specHeaders();
        h.put("webhook-timestamp", "yesterday");
        assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).isEqualTo(new WebhookVerifier.Result.BadTimestamp("yesterday"));
    }

    @Test
    void svixHeaderNamesCarryTheSameScheme() {
        Map<String, String> h = Map.of("svix-id", SPEC_ID, "svix-timestamp", Long.toString(SPEC_TS), "svix-signature", SPEC_SIGNATURE);
        assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Verified.class);
    }

    @Test
    void badSecretsAreRefusedByPositionWithoutPrintingThem() {
        assertThatThrownBy(() -> WebhookSecrets.of("MAILROOM_WEBHOOK_SECRETS (resend)", List.of(SPEC_SECRET, "secret-without-prefix")))
                .hasMessageContaining("MAILROOM_WEBHOOK_SECRETS (resend)").hasMessageContaining("secret 2 of 2")
                .hasMessageNotContaining("secret-without-prefix");
        assertThatThrownBy(() -> WebhookSecrets.of("x", List.of("whsec_%%%"))).hasMessageContaining("base64");
        assertThatThrownBy(() -> WebhookSecrets.of("x", List.of("whsec_c2hvcnQ="))).hasMessageContaining("at least 16");
        assertThatThrownBy(() -> WebhookSecrets.of("x", List.of())).hasMessageContaining("at least one");
        assertThat(SECRETS.toString()).doesNotContain("MfKQ");
    }

    @Test
    void aTimestampBeyondWhatAnInstantHoldsIsStale_andOverflowOrNonNumbersAreBad_neverAnException() {
        for (String far : List.of("100000000000000000", "9223372036854775807", "-9223372036854775808", "-100000000000000000")) {
            Map<String, String> h = specHeaders();
            h.put("webhook-timestamp", far);
            assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).as(far).isInstanceOf(WebhookVerifier.Result.Stale.class);
        }
        for (String bad : List.of("9223372036854775808", "1e10", "0x10", "1614265330.5", "+-1", "１２３")) {
            Map<String, String> h = specHeaders();
            h.put("webhook-timestamp", bad);
            assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).as(bad).isInstanceOf(WebhookVerifier.Result.BadTimestamp.class);
        }
    }

    @Test
    void oneHmacPerSecretHoweverManyEntries_andEntriesPastTheCapAreRefusedBeforeAnyHmac() {
        java.util.concurrent.atomic.AtomicInteger macs = new java.util.concurrent.atomic.AtomicInteger();
        WebhookVerifier counting = new WebhookVerifier(Clock.fixed(Instant.ofEpochSecond(SPEC_TS), ZoneOffset.UTC), () -> {
            macs.incrementAndGet();
            try {
                return javax.crypto.Mac.getInstance("HmacSHA256");
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new AssertionError(e);
            }
        });
        WebhookSecrets two = WebhookSecrets.of("test", List.of("whsec_" + "b3RoZXItc2VjcmV0LWtleS0xMjM0NTY=", SPEC_SECRET));
        String wrong = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
        Map<String, String> h = specHeaders();
        h.put("webhook-signature", String.join(" ", java.util.Collections.nCopies(WebhookVerifier.MAX_SIGNATURE_ENTRIES, wrong)));
        assertThat(counting.verify(two, h::get, SPEC_BODY)).isEqualTo(new WebhookVerifier.Result.NoValidSignature(10));
        assertThat(macs.get()).isEqualTo(2);

        macs.set(0);
        h.put("webhook-signature", String.join(" ", java.util.Collections.nCopies(9, wrong)) + " " + SPEC_SIGNATURE);
        assertThat(counting.verify(two, h::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Verified.class);
        assertThat(macs.get()).isEqualTo(2);

        macs.set(0);
        h.put("webhook-signature", String.join(" ", java.util.Collections.nCopies(11, "v1,")));
        assertThat(counting.verify(two, h::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.BadHeader.class);
        h.put("webhook-signature", String.join(" ", java.util.Collections.nCopies(1900, "v1,")));
        assertThat(counting.verify(two, h::get, SPEC_BODY)).isEqualTo(new WebhookVerifier.Result.BadHeader("webhook-signature",
                "is longer than " + WebhookVerifier.MAX_SIGNATURE_HEADER_LENGTH + " characters"));
        assertThat(macs.get()).isZero();
    }

    @Test
    void withBothSpellingsPresentEitherSetVerifying_isEnough() {
        Map<String, String> h = specHeaders();
        h.put("webhook-signature", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=");
        h.put("svix-id", SPEC_ID);
        h.put("svix-timestamp", Long.toString(SPEC_TS));
        h.put("svix-signature", SPEC_SIGNATURE);
        assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Verified.class);

        Map<String, String> webhookOnly = specHeaders();
        webhookOnly.put("svix-id", "msg_other");
        webhookOnly.put("svix-timestamp", Long.toString(SPEC_TS));
        webhookOnly.put("svix-signature", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=");
        assertThat(at(SPEC_TS).verify(SECRETS, webhookOnly::get, SPEC_BODY)).isInstanceOf(WebhookVerifier.Result.Verified.class);

        h.put("svix-signature", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=");
        assertThat(at(SPEC_TS).verify(SECRETS, h::get, SPEC_BODY)).isEqualTo(new WebhookVerifier.Result.NoValidSignature(1));
        // a set half there is named by its own prefix
        assertThat(at(SPEC_TS).verify(SECRETS, Map.of("svix-id", SPEC_ID)::get, SPEC_BODY))
                .isEqualTo(new WebhookVerifier.Result.MissingHeader("svix-timestamp"));
    }
}
