package io.mailroom.chaos;

import io.mailroom.outbox.InvalidSettingException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ArgsTest {

    @Test
    void optionsTakeTheNextWordOrAnEqualsSignAndAFlagAloneIsTrue() {
        Args a = Args.parse(new String[]{"--load", "90s", "--seed=7", "--verbose", "--lease", "PT10S"});
        assertThat(a.duration("load", Duration.ZERO)).isEqualTo(Duration.ofSeconds(90));
        assertThat(a.duration("lease", Duration.ZERO)).isEqualTo(Duration.ofSeconds(10));
        assertThat(a.duration("drain", Duration.ofMinutes(2))).isEqualTo(Duration.ofMinutes(2));
        assertThat(a.longValue("seed", 1)).isEqualTo(7);
        assertThat(a.flag("verbose")).isTrue();
        assertThat(a.flag("quiet")).isFalse();
    }

    @Test
    void badValuesNameTheOption() {
        Args a = Args.parse(new String[]{"--load", "soon", "--outage", "-PT5S", "--seed", "x", "--p451", "1/2"});
        assertThatThrownBy(() -> a.duration("load", Duration.ZERO))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("--load"))
                .hasMessage("--load must be a duration like 500ms, 10s, 5m or PT10S, got 'soon'");
        assertThatThrownBy(() -> a.duration("outage", Duration.ZERO)).hasMessage("--outage must not be negative, got '-PT5S'");
        assertThatThrownBy(() -> a.longValue("seed", 1)).hasMessage("--seed must be an integer, got 'x'");
        assertThatThrownBy(() -> a.decimal("p451", 0)).hasMessage("--p451 must be a number, got '1/2'");
        assertThatThrownBy(() -> a.required("record")).hasMessage("--record is required");
        assertThatThrownBy(() -> Args.parse(new String[]{"stray"})).hasMessageContaining("unexpected argument 'stray'");
    }
}
