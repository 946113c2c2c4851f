package io.mailroom.email.metrics;

import io.mailroom.outbox.InvalidSettingException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** MAILROOM_METRIC_TAGS: only listed values become labels, and an unbounded entry is refused naming the setting. */
class MetricTagsTest {

    @Test
    void listedValuesAreLabels_othersAreOther_aMissingTagIsNone() {
        MetricTags tags = MetricTags.parse(" category=invoice|receipt , plan=pro");
        assertThat(tags.allowed()).containsOnlyKeys("category", "plan");
        assertThat(tags.label("category", Map.of("category", "invoice"))).isEqualTo("invoice");
        assertThat(tags.label("category", Map.of("category", "user-4711"))).isEqualTo(MetricTags.OTHER);
        assertThat(tags.label("plan", Map.of("category", "invoice"))).isEqualTo(MetricTags.NONE);
        assertThat(MetricTags.parse("").allowed()).isEmpty();
        assertThat(MetricTags.parse(null)).isEqualTo(MetricTags.NO_TAGS);
    }

    @Test
    void anUnboundedOrBadEntryIsRefusedNamingTheSetting() {
        for (String bad : new String[]{"category", "category=", "bad name=x", "plan=a b", "plan=other", "plan=a,plan=b",
                "t=" + String.join("|", java.util.stream.IntStream.rangeClosed(0, 20).mapToObj(i -> "v" + i).toList()), "a=1,b=1,c=1,d=1,e=1,f=1"}) {
            assertThatThrownBy(() -> MetricTags.parse(bad)).as(bad).isInstanceOf(InvalidSettingException.class)
                    .hasMessageStartingWith("MAILROOM_METRIC_TAGS ");
        }
    }
}
