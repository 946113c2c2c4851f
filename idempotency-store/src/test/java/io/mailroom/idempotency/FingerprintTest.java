package io.mailroom.idempotency;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FingerprintTest {

    @Test
    void encodingIsPinned_soStoredFingerprintsStayValidAcrossReleases() {
        // Computed independently (Python hashlib) from the documented encoding: the scheme tag, then
        // per part a 4-byte big-endian UTF-8 length (-1 for null) and the bytes.
        assertThat(Fingerprint.of("ab", "c").hex())
                .isEqualTo("cb63c4cf5d10500702f7d0ff569cd9f9333fefa0b44160f29e9e9aab861dae62");
        assertThat(Fingerprint.of("a@example.com", "Order 102", null, "v3", "Grüße ✉").hex())
                .isEqualTo("e3174df01c0a94303567c8729bd8b0617506df907145409cee0f6498e8d6e918");
    }

    @Test
    void partBoundariesNullsAndOrderAllCount() {
        List<Fingerprint> all = List.of(
                Fingerprint.of("ab", "c"),
                Fingerprint.of("a", "bc"),
                Fingerprint.of("abc"),
                Fingerprint.of("abc", ""),
                Fingerprint.of("abc", (String) null),
                Fingerprint.of("c", "ab"),
                Fingerprint.of(""),
                Fingerprint.of((String) null),
                Fingerprint.of("", ""));
        Set<Fingerprint> distinct = new HashSet<>(all);
        assertThat(distinct).hasSize(all.size());
    }

    @Test
    void samePartsGiveEqualValues_as64LowercaseHex() {
        Fingerprint a = Fingerprint.of("to@example.com", "subject", "body");
        Fingerprint b = Fingerprint.of("to@example.com", "subject", "body");
        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a.hex()).matches("[0-9a-f]{64}");
        assertThat(new Fingerprint(a.hex())).isEqualTo(a);
    }

    @Test
    void noUnicodeNormalisation_differentCodePointsAreDifferentRequests() {
        assertThat(Fingerprint.of("\u00e9")).isNotEqualTo(Fingerprint.of("e\u0301"));
    }

    @Test
    void rejectsWhatCannotBeEncodedUnambiguously() {
        assertThatThrownBy(Fingerprint::of).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("parts");
        assertThatThrownBy(() -> Fingerprint.of((String[]) null)).isInstanceOf(IllegalArgumentException.class);
        // An unpaired surrogate would be replaced by '?' and collide with a real '?'.
        assertThatThrownBy(() -> Fingerprint.of("ok", "bad\uD800"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("parts[1]");
        for (String bad : List.of("\uDC00", "a\uDE00b", "\uD83D", "x\uD83Dy", "\uDE00\uD83D", "\uD83D\uD83D\uDE00")) {
            assertThatThrownBy(() -> Fingerprint.of("ok", "fine", bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("parts[2]").hasMessageContaining("unpaired surrogate");
        }
    }

    @Test
    void charactersBeyondTheBasicPlaneAreEncodedAsTheirFourUtf8Bytes() {
        // Python hashlib over the documented encoding, as above
        assertThat(Fingerprint.of("\u0110\u01a1n h\u00e0ng \uD83D\uDE00", "\uD834\uDD1Ex", "ok").hex())
                .isEqualTo("c8b709d3c86dd3c498d875987b1c9d8f9bb610a1737bd708ff1e0f0f482cbb7f");
    }

    @Test
    void constructorAcceptsOnly64LowercaseHex() {
        String valid = "0".repeat(64);
        assertThat(new Fingerprint(valid).hex()).isEqualTo(valid);
        assertThatThrownBy(() -> new Fingerprint(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("hex");
        assertThatThrownBy(() -> new Fingerprint("0".repeat(63))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Fingerprint("A".repeat(64))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Fingerprint("g".repeat(64))).isInstanceOf(IllegalArgumentException.class);
    }
}
