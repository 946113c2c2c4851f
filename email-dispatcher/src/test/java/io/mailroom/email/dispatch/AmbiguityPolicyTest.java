package io.mailroom.email.dispatch;

import io.mailroom.idempotency.Reservation;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The decision on an unknown outcome, as a function of the repeats already made and the time. */
class AmbiguityPolicyTest {

    private static final Instant FIRST = Instant.parse("2026-12-03T10:00:00Z");

    private static Reservation.Ambiguous unknownAfter(int repeats) {
        return new Reservation.Ambiguous("email-order-1", "no final reply after DATA", FIRST, FIRST, "w",
                repeats + 1, FIRST, repeats);
    }

    @Test
    void resendRepeatsAnUnknownOutcomeOnlyUpToTheBound() {
        AmbiguityPolicy once = AmbiguityPolicy.resend();
        assertThat(once.maxResends()).isEqualTo(AmbiguityPolicy.DEFAULT_MAX_RESENDS).isEqualTo(1);
        assertThat(once.mayRepeat(unknownAfter(0), FIRST)).isTrue();
        assertThat(once.mayRepeat(unknownAfter(1), FIRST)).isFalse();
        assertThat(once.resendsLeft(0)).isTrue();
        assertThat(once.resendsLeft(1)).isFalse();

        AmbiguityPolicy thrice = AmbiguityPolicy.resend(3);
        assertThat(thrice.mayRepeat(unknownAfter(2), FIRST)).isTrue();
        assertThat(thrice.mayRepeat(unknownAfter(3), FIRST)).isFalse();
        assertThat(thrice.resendsLeft(2)).isTrue();
        assertThat(thrice.resendsLeft(3)).isFalse();
    }

    @Test
    void resendsAreSpacedByAGrowingBackoff() {
        AmbiguityPolicy policy = AmbiguityPolicy.resend(5);
        for (int i = 0; i < 20; i++) {
            assertThat(policy.resendDelay(1)).isBetween(Duration.ofSeconds(45), Duration.ofMinutes(1));
            assertThat(policy.resendDelay(2)).isBetween(Duration.ofSeconds(90), Duration.ofMinutes(2));
            assertThat(policy.resendDelay(10)).isBetween(Duration.ofMinutes(22).plusSeconds(30), Duration.ofMinutes(30));
        }
    }

    @Test
    void reviewNeverRepeats_andResendWithKeyRepeatsWithinItsWindowWhateverTheCount() {
        assertThat(AmbiguityPolicy.review().mayRepeat(unknownAfter(0), FIRST)).isFalse();
        assertThat(AmbiguityPolicy.review().resendsLeft(0)).isFalse();
        AmbiguityPolicy http = AmbiguityPolicy.resendWithKey(Duration.ofHours(24));
        assertThat(http.mayRepeat(unknownAfter(7), FIRST.plus(Duration.ofHours(23)))).isTrue();
        assertThat(http.mayRepeat(unknownAfter(0), FIRST.plus(Duration.ofHours(24)))).isFalse();
    }

    @Test
    void theSettingIsParsedAndBadValuesNameIt() {
        assertThat(AmbiguityPolicy.forSmtp(null, null)).isEqualTo(AmbiguityPolicy.review());
        assertThat(AmbiguityPolicy.forSmtp("resend", null)).isEqualTo(AmbiguityPolicy.resend(1));
        assertThat(AmbiguityPolicy.forSmtp(" Resend ", 3)).isEqualTo(AmbiguityPolicy.resend(3));
        for (int bad : new int[]{-1, 0, AmbiguityPolicy.MAX_RESENDS_LIMIT + 1}) {
            assertThatThrownBy(() -> AmbiguityPolicy.forSmtp("resend", bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MAILROOM_SMTP_AMBIGUOUS_RESENDS");
        }
        assertThatThrownBy(() -> AmbiguityPolicy.forSmtp("review", 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MAILROOM_SMTP_AMBIGUOUS_RESENDS").hasMessageContaining("MAILROOM_SMTP_AMBIGUOUS=resend");
    }
}
