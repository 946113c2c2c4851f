package io.mailroom.templates;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.FormatStyle;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The datetime filter prints what the JDK's localized formats print, in every style and locale, however often. */
class FiltersTest {

    @Test
    void datetimePrintsTheJdksLocalizedFormatForEveryStyleAndLocale() throws Exception {
        Map<String, String> files = new HashMap<>();
        files.put("at/subject.peb", "When");
        files.put("at/text.peb", "{{ at | datetime(style=style, zone=zone) }}");
        files.put("at/html.peb", "<p>{{ at | datetime(style=style, zone=zone) }}</p>");
        TemplateCatalogue catalogue = TemplateCatalogue.of(files);
        String at = "2026-12-05T23:59:30+07:00";
        for (Locale locale : List.of(Locale.ENGLISH, Locale.forLanguageTag("vi"), Locale.forLanguageTag("en-US"),
                Locale.GERMANY, Locale.JAPAN, Locale.forLanguageTag("ar-EG"))) {
            for (FormatStyle style : FormatStyle.values()) {
                for (String zone : List.of("UTC", "Asia/Ho_Chi_Minh", "America/New_York")) {
                    FormatStyle time = style.compareTo(FormatStyle.MEDIUM) > 0 ? FormatStyle.MEDIUM : style;
                    String expected = DateTimeFormatter.ofLocalizedDateTime(style, time).withLocale(locale)
                            .format(Instant.parse("2026-12-05T16:59:30Z").atZone(ZoneId.of(zone)));
                    for (int i = 0; i < 2; i++) { // built once, then from the cache
                        RenderedTemplate r = catalogue.render("at", locale,
                                Map.of("at", at, "style", style.name().toLowerCase(Locale.ROOT), "zone", zone));
                        assertThat(r.text()).as("%s %s %s", locale, style, zone).isEqualTo(expected + "\n");
                    }
                }
            }
        }
    }
}
