package io.mailroom.orders;

import io.mailroom.templates.RenderedTemplate;
import io.mailroom.templates.TemplateCatalogue;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shop's own templates (examples/order-service/templates, on the class path under
 * {@value ShopTemplates#RESOURCE}), as a dispatcher loads them over Mailroom's built-in layouts:
 * each compiles and renders its sample in English and Vietnamese, with the shop's footer in place
 * of the built-in neutral one. Moved here from email-templates, which ships no order template.
 */
class ShopTemplatesTest {

    private static final Locale VI = Locale.forLanguageTag("vi");

    @TempDir
    static Path dir;
    private static TemplateCatalogue catalogue;

    @BeforeAll
    static void load() throws Exception {
        catalogue = TemplateCatalogue.load(ShopTemplates.copyTo(dir));
    }

    private static String read(String relative) throws Exception {
        return Files.readString(dir.resolve(relative));
    }

    @Test
    void theShopsTemplatesAllCompileAndRenderTheirSamplesOverTheBuiltInLayouts() {
        assertThat(catalogue.names()).containsExactly("order_cancelled", "order_confirmation", "order_shipped");
        assertThat(catalogue.check()).isEmpty();
        assertThat(catalogue.origin("_layouts/html.peb")).isEqualTo("built-in _layouts/html.peb");
        assertThat(catalogue.origin("messages.properties")).doesNotStartWith("built-in");
    }

    @ParameterizedTest
    @ValueSource(strings = {"order_confirmation", "order_shipped", "order_cancelled"})
    void eachRendersItsSampleInEnglishAndVietnameseWithTheShopsFooter(String name) throws Exception {
        assertThat(catalogue.locales(name)).contains("vi");
        RenderedTemplate en = catalogue.renderJson(name, Locale.ENGLISH, read(name + "/sample.json"));
        RenderedTemplate vi = catalogue.renderJson(name, VI, read(name + "/sample.json"));
        for (RenderedTemplate r : List.of(en, vi)) {
            assertThat(r.subject()).isNotBlank().doesNotContain("\n");
            assertThat(r.text()).contains("Nguyễn Thị Ánh");
            assertThat(r.html()).contains("Nguyễn Thị Ánh").contains("<html lang=\"" + r.locale().toLanguageTag() + "\">");
        }
        assertThat(vi.subject()).isNotEqualTo(en.subject());
        assertThat(vi.text()).contains("Bạn nhận được email này vì đã đặt hàng");
        assertThat(en.text()).contains("You are receiving this email because of an order placed with us.");
    }

    @Test
    void theShippingNoticeNamesCarrierTrackingAndLinkEscapedOnlyInHtml() throws Exception {
        RenderedTemplate vi = catalogue.renderJson("order_shipped", VI, read("order_shipped/sample.json"));
        assertThat(vi.subject()).isEqualTo("Đơn hàng #102 của bạn đã được giao cho đơn vị vận chuyển");
        assertThat(vi.text()).contains("Tin vui, Nguyễn Thị Ánh!")
                .contains("đã được giao cho đơn vị vận chuyển Giao Hàng <Nhanh> & Co.")
                .contains("Mã vận đơn: GHN-7731-ĐN")
                .contains("Theo dõi bưu kiện: https://track.example.com/GHN-7731?lang=vi&x=<1>");
        assertThat(vi.html()).contains("Giao Hàng &lt;Nhanh&gt; &amp; Co")
                .contains("href=\"https://track.example.com/GHN-7731?lang=vi&amp;x=&lt;1&gt;\"")
                .doesNotContain("<Nhanh>");
        RenderedTemplate en = catalogue.renderJson("order_shipped", Locale.ENGLISH, read("order_shipped/sample.json"));
        assertThat(en.subject()).isEqualTo("Your order #102 is on its way");

        // no tracking link: the line is left out, in both parts
        String noLink = read("order_shipped/sample.json").replace("\"trackingUrl\": \"https://track.example.com/GHN-7731?lang=vi&x=<1>\"",
                "\"trackingUrl\": null");
        RenderedTemplate plain = catalogue.renderJson("order_shipped", VI, noLink);
        assertThat(plain.text()).doesNotContain("Theo dõi").contains("Mã vận đơn");
        assertThat(plain.html()).doesNotContain("<a ");
    }

    @Test
    void aQuoteInTheTrackingLinkCannotLeaveTheHrefAttribute() throws Exception {
        String sample = read("order_shipped/sample.json").replace("https://track.example.com/GHN-7731?lang=vi&x=<1>",
                "https://t.example/\\\" onclick=\\\"alert(1)");
        RenderedTemplate r = catalogue.renderJson("order_shipped", Locale.ENGLISH, sample);
        assertThat(r.html()).doesNotContain("\" onclick=\"").containsPattern("href=\"https://t.example/(&quot;|&#34;|&#x22;) onclick=");
    }

    @Test
    void theCancellationStatesReasonAndRefundInTheCustomersLanguage() throws Exception {
        RenderedTemplate vi = catalogue.renderJson("order_cancelled", VI, read("order_cancelled/sample.json"));
        assertThat(vi.subject()).isEqualTo("Đơn hàng #103 của bạn đã bị hủy");
        assertThat(vi.text()).contains("Xin chào Nguyễn Thị Ánh,")
                .contains("Lý do: Khách hàng đổi ý <gấp> & cần hoàn tiền")
                .contains("535.000");
        assertThat(vi.html()).contains("Khách hàng đổi ý &lt;gấp&gt; &amp; cần hoàn tiền").doesNotContain("<gấp>");
        RenderedTemplate en = catalogue.renderJson("order_cancelled", Locale.ENGLISH,
                read("order_cancelled/sample.json").replace("\"Khách hàng đổi ý <gấp> & cần hoàn tiền\"", "null"));
        assertThat(en.subject()).isEqualTo("Your order #103 has been cancelled");
        assertThat(en.text()).doesNotContain("Reason").contains("will be refunded");
    }
}
