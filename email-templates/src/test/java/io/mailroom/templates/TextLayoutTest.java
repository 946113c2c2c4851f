package io.mailroom.templates;

import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The single passes give what the regular expressions they replace give, on every text tried. */
class TextLayoutTest {

    private static final Pattern SPACE = Pattern.compile("\\s+");
    private static final Pattern BLANK_LINES = Pattern.compile("(?:[ \\t]*\\r?\\n){3,}");
    /** The characters either expression looks at, and some it must leave alone. */
    private static final String ALPHABET = "  \t\t\n\n\n\r\r\u000B\fab\u00a0\u2003ệ";

    private static String subjectByExpression(String s) {
        return SPACE.matcher(s).replaceAll(" ").strip();
    }

    private static String bodyByExpression(String s) {
        return BLANK_LINES.matcher(s).replaceAll("\n\n");
    }

    @Test
    void theSubjectIsOnOneLineAsTheExpressionMadeIt() {
        for (String s : new String[]{"", " ", "Order 102", "Order  102", " Order\t102 ", "Order\r\n102",
                "\u2003Order 102\u2003", "a\u000Bb\fc", "\u00a0x\u00a0", "Đơn hàng  số\n102 "}) {
            assertThat(TextLayout.oneLine(s)).as("[%s]", s).isEqualTo(subjectByExpression(s));
        }
    }

    @Test
    void blankLinesCollapseAsTheExpressionCollapsedThem() {
        for (String s : new String[]{"", "a", "a\n\nb", "a\n\n\nb", "a\n \n\t\nb", "a\r\n\r\n\r\nb", "a\r\r\n\n\nb",
                "a \n \n \n \n b", "\n\n\n", "a\n\n\n", "  \t  x", "a\n\n\r\n\n", "a \t \r\n \r\n\t\r\n\r"}) {
            assertThat(TextLayout.blankLinesCollapsed(s)).as("[%s]", s).isEqualTo(bodyByExpression(s));
        }
    }

    @Test
    void randomTextsGiveTheSameResultBothWays() {
        Random random = new Random(28);
        for (int t = 0; t < 20_000; t++) {
            StringBuilder b = new StringBuilder();
            int length = random.nextInt(t % 10 == 0 ? 400 : 40);
            for (int i = 0; i < length; i++) {
                b.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
            }
            String s = b.toString();
            assertThat(TextLayout.oneLine(s)).as("[%s]", s).isEqualTo(subjectByExpression(s));
            assertThat(TextLayout.blankLinesCollapsed(s)).as("[%s]", s).isEqualTo(bodyByExpression(s));
        }
    }

    @Test
    void aTextWithNothingToChangeIsReturnedAsItIs() {
        String text = "Hello Ana,\n\nYour order 102:\n- tea x 2: 4.00 EUR\n";
        assertThat(TextLayout.blankLinesCollapsed(text)).isSameAs(text);
        String subject = "Order 102 confirmed";
        assertThat(TextLayout.oneLine(subject)).isSameAs(subject);
    }
}
