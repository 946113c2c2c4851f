package io.mailroom.templates;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The direct read agrees with {@link OffsetDateTime#parse} on every text, taken or refused. */
class IsoTimestampsTest {

    @Test
    void theCommonShapesAreReadDirectlyToTheSameInstant() {
        for (String s : List.of("2026-12-05T23:59:30+07:00", "2026-12-05T16:59:30Z", "2026-12-05T16:59:30.5Z",
                "2026-12-05T16:59:30.123456789-03:30", "0000-01-01T00:00:00+18:00", "2024-02-29T12:00:00-00:00",
                "9999-12-31T23:59:59.000000001-18:00")) {
            assertThat(IsoTimestamps.common(s)).as(s).isNotNull().isEqualTo(OffsetDateTime.parse(s).toInstant());
        }
    }

    @Test
    void otherTextIsLeftToTheGeneralParserWhichTakesOrRefusesItAsBefore() {
        // taken by the general parser only: no seconds, lower case, an offset with seconds, a bare point
        for (String s : List.of("2026-12-05T23:59+07:00", "2026-12-05t16:59:30z", "2026-12-05T16:59:30+07:00:15",
                "2026-12-05T10:00:00.Z")) {
            assertThat(IsoTimestamps.common(s)).as(s).isNull();
            assertThat(IsoTimestamps.parse(s)).as(s).isEqualTo(OffsetDateTime.parse(s).toInstant());
        }
        for (String s : List.of("2026-02-30T10:00:00Z", "2026-12-05T24:00:00Z", "2026-12-05T23:59:60Z",
                "2026-12-05T10:00:00", "2026-12-05T10:00:00+19:00", "2026-12-05T10:00:00.1234567890Z",
                "2026-12-05 10:00:00Z", "2026-13-05T10:00:00Z", "+2026-12-05T10:00:00Z",
                "2026-12-05T10:00:00+07:60", "2026-12-05T10:00:00+0700", "x", "")) {
            assertThat(IsoTimestamps.common(s)).as(s).isNull();
            assertThatThrownBy(() -> IsoTimestamps.parse(s)).as(s).isInstanceOf(DateTimeParseException.class);
        }
    }

    @Test
    void randomTimestampsInEveryCommonShapeAgree() {
        Random random = new Random(28);
        for (int i = 0; i < 20_000; i++) {
            Instant at = Instant.ofEpochSecond(random.nextLong(-62_000_000_000L, 253_000_000_000L), random.nextInt(1_000_000_000));
            ZoneOffset offset = ZoneOffset.ofTotalSeconds(random.nextInt(-18 * 60, 18 * 60 + 1) * 60);
            String s = OffsetDateTime.ofInstant(at, offset).toString(); // drops zero seconds and fractions as it likes
            Instant expected = OffsetDateTime.parse(s).toInstant();
            assertThat(IsoTimestamps.parse(s)).as(s).isEqualTo(expected);
        }
    }
}
