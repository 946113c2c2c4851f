package io.mailroom.templates;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CssInlinerTest {

    @Test
    void specificityThenSourceOrderDecideAndTheElementsOwnStyleWins() {
        String html = CssInliner.inline("""
                <html><head><style>
                p.note { color: blue; }
                p { color: red; font-size: 14px; }
                #x { font-size: 20px; }
                a:hover { color: pink; }
                </style></head><body><p class="note" id="x" style="margin: 0">a</p><p>b</p><a href="#">c</a></body></html>""");
        assertThat(html).contains("<p class=\"note\" id=\"x\" style=\"color: blue; font-size: 20px; margin: 0;\">a</p>");
        assertThat(html).contains("<p style=\"color: red; font-size: 14px;\">b</p>");
        assertThat(html).contains("a:hover{color: pink;}").doesNotContain("p.note {");
    }

    @Test
    void specificityCountsIdsClassesAndElements() {
        assertThat(CssInliner.specificity("#a")).isGreaterThan(CssInliner.specificity(".a.b.c"));
        assertThat(CssInliner.specificity(".a")).isGreaterThan(CssInliner.specificity("table td th"));
        assertThat(CssInliner.specificity("table.items td")).isEqualTo(102);
    }
}
