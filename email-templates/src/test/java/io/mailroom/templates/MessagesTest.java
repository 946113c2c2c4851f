package io.mailroom.templates;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Messages split once at their placeholders: what a fill gives, however often, and what it refuses. */
class MessagesTest {

    private static Messages messages(String properties) throws TemplateException {
        return Messages.load(TemplateFiles.of(Map.of("hello/messages.properties", properties)), "hello", Locale.ENGLISH);
    }

    @Test
    void placeholdersAreFilledWithTheirValuesTakenLiterally() throws Exception {
        Messages m = messages("greeting={name}, your order {order} ({name}) is on its way\\n");
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("name", "A$1 \\ {order}");
        args.put("order", 102);
        for (int i = 0; i < 3; i++) { // the first use splits the message, the later ones reuse the split
            assertThat(m.format("greeting", args))
                    .contains("A$1 \\ {order}, your order 102 (A$1 \\ {order}) is on its way\n");
        }
    }

    @Test
    void aMessageWithoutPlaceholdersOrWithTextAtBothEndsComesBackWhole() throws Exception {
        Messages m = messages("plain=Thank you\nends={a}-{b}\nbraces={not a placeholder} {1x}\n");
        assertThat(m.format("plain", null)).contains("Thank you");
        assertThat(m.format("ends", Map.of("a", "x", "b", "y"))).contains("x-y");
        assertThat(m.format("braces", Map.of())).contains("{not a placeholder} {1x}");
        assertThat(m.format("absent", Map.of())).isEmpty();
    }

    @Test
    void aMissingOrNullPlaceholderIsNamedEveryTime() throws Exception {
        Messages m = messages("greeting=Hi {name} from {shop}\n");
        Map<String, Object> withNull = new HashMap<>();
        withNull.put("name", "An");
        withNull.put("shop", null);
        for (Map<String, Object> args : java.util.Arrays.asList(Map.<String, Object>of("name", "An"), withNull, null)) {
            assertThatThrownBy(() -> m.format("greeting", args)).isInstanceOf(Messages.MissingPlaceholder.class)
                    .hasMessageContaining("greeting");
        }
        assertThat(m.format("greeting", Map.of("name", "An", "shop", "Mailroom"))).contains("Hi An from Mailroom");
    }
}
