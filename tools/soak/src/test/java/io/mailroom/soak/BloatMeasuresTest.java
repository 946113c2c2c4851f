package io.mailroom.soak;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class BloatMeasuresTest {

    /** A sample every 5 s with the given claim p99 and throughput; only those two matter here. */
    private static SoakRun.Sample sample(double t, double p99, double throughput) {
        return new SoakRun.Sample(t, "x", 1.0, p99, throughput, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    @Test
    void theRatioIsTheMedianTwoMinutesAfterTheHoldOverTheMedianBeforeIt() {
        List<SoakRun.Sample> samples = new ArrayList<>();
        for (double t = 5; t <= 900; t += 5) {
            double p99 = t < 180 ? (t == 60 ? 40.0 : 5.0) // one outlier before: the median ignores it
                    : t < 540 ? 20.0 // the hold
                    : t >= 630 && t < 690 ? 6.0 : 9.0;
            samples.add(sample(t, p99, t > 480 && t <= 540 ? 800 : 1000));
        }
        SoakRun.BloatMeasures m = SoakRun.BloatMeasures.of(samples, 1000, 180, 540);
        assertThat(m.baselineP99()).isEqualTo(5.0);
        assertThat(m.afterP99()).isEqualTo(6.0);
        assertThat(m.ratio()).isCloseTo(1.2, within(1e-9));
        assertThat(m.holdMinutesOfOffered()).containsExactly(1.0, 1.0, 1.0, 1.0, 1.0, 0.8);
    }

    @Test
    void samplesWithoutClaimsAreLeftOutAndAnEmptyWindowIsNotANumber() {
        List<SoakRun.Sample> samples = List.of(sample(5, Double.NaN, 0), sample(10, 4.0, 10), sample(15, 8.0, 10),
                sample(20, Double.NaN, 10));
        SoakRun.BloatMeasures m = SoakRun.BloatMeasures.of(samples, 10, 20, 20);
        assertThat(m.baselineP99()).isEqualTo(6.0); // the two real samples' median
        assertThat(m.afterP99()).isNaN(); // the run ended before 110 s
        assertThat(m.holdMinutesOfOffered()).isEmpty(); // no hold: the control run
    }
}
