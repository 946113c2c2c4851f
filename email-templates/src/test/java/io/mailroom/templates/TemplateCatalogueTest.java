package io.mailroom.templates;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TemplateCatalogueTest {

    private static final Locale VI = Locale.forLanguageTag("vi");

    /** The module's test templates (src/test/resources/templates): {@code receipt} and {@code welcome}. */
    private static final Path TEMPLATES = testTemplates();

    private static Path testTemplates() {
        try {
            return Path.of(TemplateCatalogueTest.class.getClassLoader().getResource("templates").toURI());
        } catch (java.net.URISyntaxException e) {
            throw new AssertionError(e);
        }
    }

    private static TemplateCatalogue catalogue() throws TemplateException {
        return TemplateCatalogue.load(TEMPLATES);
    }

    private static String sample() {
        return read("receipt/sample.json");
    }

    private static String read(String relative) {
        try {
            return Files.readString(TEMPLATES.resolve(relative), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A minimal template set: one template, its layout-free parts and English messages. */
    private static Map<String, String> minimal() {
        Map<String, String> files = new HashMap<>();
        files.put("hello/subject.peb", "{{ t(\"subject\") }}");
        files.put("hello/text.peb", "Hi {{ name }} & co");
        files.put("hello/html.peb", "<style>p { color: red; }</style><p>Hi {{ name }}</p>");
        files.put("hello/messages.properties", "subject=Hello\n");
        return files;
    }

    /** Mailroom ships layouts, a style sheet and a neutral footer, no application's templates. */
    @Test
    void theBuiltInsAreGenericLayoutsThatTemplatesInADirectoryCompileAgainst() throws Exception {
        assertThat(TemplateCatalogue.builtIn().names()).isEmpty();
        assertThat(TemplateCatalogue.builtIn().check()).isEmpty();
        TemplateCatalogue catalogue = catalogue();
        assertThat(catalogue.names()).containsExactly("receipt", "welcome");
        assertThat(catalogue.check()).isEmpty();
        assertThat(catalogue.locales("receipt")).contains("vi");
        assertThat(catalogue.origin("_layouts/html.peb")).isEqualTo("built-in _layouts/html.peb");
    }

    /** Each test template, in English and Vietnamese: the sample renders, in its own words, with the built-in footer. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"receipt", "welcome"})
    void eachTemplateRendersItsSampleInEnglishAndVietnameseWithTheNeutralFooter(String name) throws Exception {
        TemplateCatalogue catalogue = catalogue();
        assertThat(catalogue.locales(name)).contains("vi");
        String sample = read(name + "/sample.json");
        RenderedTemplate en = catalogue.renderJson(name, Locale.ENGLISH, sample);
        RenderedTemplate vi = catalogue.renderJson(name, VI, sample);
        for (RenderedTemplate r : List.of(en, vi)) {
            assertThat(r.subject()).isNotBlank().doesNotContain("\n");
            assertThat(r.text()).contains("Nguyễn Thị Ánh");
            assertThat(r.html()).contains("Nguyễn Thị Ánh").contains("<html lang=\"" + r.locale().toLanguageTag() + "\">");
            assertThat(r.text() + r.html()).doesNotContain("order placed").doesNotContain("đặt hàng");
        }
        assertThat(vi.subject()).isNotEqualTo(en.subject());
        assertThat(vi.text()).contains("Đây là email tự động");
        assertThat(en.text()).contains("This is an automated message");
    }

    @Test
    void vietnameseRendersWithDiacriticsEscapedDataAndInlinedCss() throws Exception {
        RenderedTemplate r = catalogue().renderJson("receipt", VI, sample());

        assertThat(r.subject()).isEqualTo("Biên nhận #102");
        assertThat(r.text()).contains("Cảm ơn bạn, Nguyễn Thị Ánh!")
                .contains("Bánh mì <đặc biệt> & pa-tê x 5") // the text part is not HTML: nothing escaped
                .contains("535.000")
                .contains("Đây là email tự động");          // the shared layout's footer, in Vietnamese
        assertThat(r.html())
                .contains("Bánh mì &lt;đặc biệt&gt; &amp; pa-tê")
                .doesNotContain("<đặc biệt>")
                .contains("<html lang=\"vi\">")
                .containsPattern("<h1 style=\"font-size: 20px; margin: 0 0 16px 0;?\">Cảm ơn bạn, Nguyễn Thị Ánh!</h1>")
                .containsPattern("<td class=\"num total\" style=\"[^\"]*font-weight: bold;[^\"]*text-align: right")
                .contains("@media (max-width: 480px)")       // cannot be inlined: kept in the head
                .doesNotContain("table.items th {");
        assertThat(r.version()).startsWith("receipt@").hasSize("receipt@".length() + 16);
        assertThat(r.locale()).isEqualTo(VI);
    }

    @Test
    void englishIsTheDefaultWording() throws Exception {
        RenderedTemplate r = catalogue().renderJson("receipt", Locale.forLanguageTag("fr-CA"), sample());
        assertThat(r.subject()).isEqualTo("Receipt #102");
        assertThat(r.text()).contains("Thank you, Nguyễn Thị Ánh!");
    }

    @Test
    void aMissingVariableFailsTheRenderForGoodAndNamesTheVariable() throws Exception {
        String noCustomer = sample().replace("\"customer\": {\"name\": \"Nguyễn Thị Ánh\"},", "");
        assertThatThrownBy(() -> catalogue().renderJson("receipt", VI, noCustomer))
                .isInstanceOfSatisfying(TemplateException.class, e -> {
                    assertThat(e.kind()).isEqualTo(TemplateException.Kind.MISSING_VARIABLE);
                    assertThat(e.permanent()).isTrue();
                    assertThat(e.getMessage()).contains("'customer'").contains("receipt");
                });
    }

    @Test
    void aMessageKeyNoFileHasFailsTheRenderNamingTheKeyAndLocale() {
        Map<String, String> files = minimal();
        files.put("hello/subject.peb", "{{ t(\"nope\") }}");
        assertThatThrownBy(() -> TemplateCatalogue.of(files).render("hello", VI, Map.of("name", "An")))
                .isInstanceOfSatisfying(TemplateException.class, e -> {
                    assertThat(e.kind()).isEqualTo(TemplateException.Kind.MISSING_MESSAGE);
                    assertThat(e.getMessage()).contains("'nope'").contains("vi").contains("hello/subject.peb");
                });
    }

    @Test
    void aPlaceholderTheTemplateDidNotPassIsNamed() {
        Map<String, String> files = minimal();
        files.put("hello/messages.properties", "subject=Hello {who}\n");
        assertThatThrownBy(() -> TemplateCatalogue.of(files).render("hello", Locale.ENGLISH, Map.of("name", "An")))
                .isInstanceOfSatisfying(TemplateException.class, e -> {
                    assertThat(e.kind()).isEqualTo(TemplateException.Kind.MISSING_VARIABLE);
                    assertThat(e.getMessage()).contains("{who}");
                });
    }

    @Test
    void checkReportsASyntaxErrorWithItsFileAndLine() {
        Map<String, String> files = minimal();
        files.put("hello/html.peb", "<p>ok</p>\n<p>{% if name %}never closed</p>");
        List<TemplateException> problems = TemplateCatalogue.of(files).check();
        assertThat(problems).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo(TemplateException.Kind.SYNTAX);
            assertThat(e.getMessage()).contains("hello/html.peb");
        });
    }

    @Test
    void checkReportsAMissingTextPartAndRenderRefusesIt() {
        Map<String, String> files = minimal();
        files.remove("hello/text.peb");
        TemplateCatalogue catalogue = TemplateCatalogue.of(files);
        assertThat(catalogue.check()).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo(TemplateException.Kind.MISSING_PART);
            assertThat(e.getMessage()).contains("text.peb");
        });
        assertThatThrownBy(() -> catalogue.render("hello", Locale.ENGLISH, Map.of("name", "An")))
                .isInstanceOfSatisfying(TemplateException.class, e -> assertThat(e.kind()).isEqualTo(TemplateException.Kind.MISSING_PART));
    }

    @Test
    void checkRendersTheSampleAndReportsWhatItLacks() {
        Map<String, String> files = minimal();
        files.put("hello/sample.json", "{\"nom\": \"An\"}");
        assertThat(TemplateCatalogue.of(files).check()).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo(TemplateException.Kind.MISSING_VARIABLE);
            assertThat(e.getMessage()).contains("sample.json").contains("'name'");
        });
    }

    @Test
    void checkRendersTheSampleInTheDefaultEnglishWordingTooNotOnlyInTheLocalesWithAFile() {
        Map<String, String> files = minimal();
        files.put("hello/messages.properties", "subject=Hello {who}\n");
        files.put("hello/messages_vi.properties", "subject=Xin chào\n");
        files.put("hello/sample.json", "{\"name\": \"An\"}");
        assertThat(TemplateCatalogue.of(files).check()).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo(TemplateException.Kind.MISSING_VARIABLE);
            assertThat(e.getMessage()).contains("sample.json in en").contains("{who}");
        });
    }

    @Test
    void anUnknownTemplateIsNamedWithTheKnownOnes() {
        assertThatThrownBy(() -> TemplateCatalogue.of(minimal()).render("bye", Locale.ENGLISH, Map.of()))
                .isInstanceOfSatisfying(TemplateException.class, e -> {
                    assertThat(e.kind()).isEqualTo(TemplateException.Kind.UNKNOWN_TEMPLATE);
                    assertThat(e.getMessage()).contains("'bye'").contains("known: hello");
                });
    }

    @Test
    void dataThatIsNotAJsonObjectIsRefusedWithWhere() {
        TemplateCatalogue catalogue = TemplateCatalogue.of(minimal());
        assertThatThrownBy(() -> catalogue.renderJson("hello", Locale.ENGLISH, "[1,2]"))
                .hasMessageContaining("must be a JSON object");
        assertThatThrownBy(() -> catalogue.renderJson("hello", Locale.ENGLISH, "{\"name\": \"An\",\n \"x\": }"))
                .isInstanceOfSatisfying(TemplateException.class, e -> {
                    assertThat(e.kind()).isEqualTo(TemplateException.Kind.BAD_DATA);
                    assertThat(e.getMessage()).contains("line 2");
                });
        assertThatThrownBy(() -> catalogue.renderJson("hello", Locale.ENGLISH, "{\"name\": \"An\", \"name\": \"Bo\"}"))
                .isInstanceOf(TemplateException.class);
    }

    @Test
    void theSubjectIsOneLineAndTheTextPartIsNotEscaped() throws Exception {
        Map<String, String> files = minimal();
        files.put("hello/messages.properties", "subject=Hello\\n  there\n");
        RenderedTemplate r = TemplateCatalogue.of(files).render("hello", Locale.ENGLISH, Map.of("name", "<An>"));
        assertThat(r.subject()).isEqualTo("Hello there");
        assertThat(r.text()).isEqualTo("Hi <An> & co\n");
        assertThat(r.html()).contains("<p style=\"color: red;\">Hi &lt;An&gt;</p>");
    }

    @Test
    void aDirectoryAddsTemplatesAndReplacesSharedFilesAndTheVersionFollowsExactlyWhatItCovers(@TempDir Path dir) throws Exception {
        Path welcome = Files.createDirectories(dir.resolve("welcome"));
        Files.writeString(welcome.resolve("subject.peb"), "{{ t(\"subject\") }}");
        Files.writeString(welcome.resolve("text.peb"), "{% extends \"_layouts/text.peb\" %}{% block content %}Chào {{ name }}{% endblock %}");
        Files.writeString(welcome.resolve("html.peb"), "{% extends \"_layouts/html.peb\" %}{% block content %}<p>Chào {{ name }}</p>{% endblock %}");
        Files.writeString(welcome.resolve("messages.properties"), "subject=Welcome\n");
        Files.writeString(welcome.resolve("messages_vi.properties"), "subject=Chào mừng\n");

        for (String file : List.of("subject.peb", "html.peb", "text.peb", "messages.properties", "sample.json")) {
            Files.createDirectories(dir.resolve("receipt"));
            Files.copy(TEMPLATES.resolve("receipt/" + file), dir.resolve("receipt/" + file));
        }
        TemplateCatalogue first = TemplateCatalogue.load(dir);
        assertThat(first.names()).containsExactly("receipt", "welcome");
        assertThat(first.check()).isEmpty();
        assertThat(first.render("welcome", VI, Map.of("name", "Ánh")).subject()).isEqualTo("Chào mừng");
        assertThat(first.origin("welcome/subject.peb")).startsWith(dir.toAbsolutePath().normalize().toString());
        assertThat(first.origin("style.css")).isEqualTo("built-in style.css");

        String receiptEn = first.version("receipt", Locale.ENGLISH);
        String welcomeEn = first.version("welcome", Locale.ENGLISH);
        String welcomeVi = first.version("welcome", VI);
        assertThat(TemplateCatalogue.load(dir).version("welcome", VI)).as("same files, same version").isEqualTo(welcomeVi);
        assertThat(welcomeEn).isNotEqualTo(welcomeVi);

        // Vietnamese wording of one template changes: its vi version only.
        Files.writeString(welcome.resolve("messages_vi.properties"), "subject=Xin chào\n");
        TemplateCatalogue second = TemplateCatalogue.load(dir);
        assertThat(second.version("welcome", VI)).isNotEqualTo(welcomeVi);
        assertThat(second.version("welcome", Locale.ENGLISH)).isEqualTo(welcomeEn);
        assertThat(second.version("receipt", Locale.ENGLISH)).isEqualTo(receiptEn);

        // A shared file replaced by the directory: every template's version.
        Files.writeString(dir.resolve("style.css"), "p { color: green; }");
        TemplateCatalogue third = TemplateCatalogue.load(dir);
        assertThat(third.version("receipt", Locale.ENGLISH)).isNotEqualTo(receiptEn);
        assertThat(third.version("welcome", Locale.ENGLISH)).isNotEqualTo(welcomeEn);
        assertThat(third.render("welcome", Locale.ENGLISH, Map.of("name", "An")).html()).contains("<p style=\"color: green;\">Chào An</p>");
    }

    @Test
    void aDirectoryThatDoesNotExistIsRefusedByName(@TempDir Path dir) {
        assertThatThrownBy(() -> TemplateCatalogue.load(dir.resolve("nope")))
                .isInstanceOfSatisfying(TemplateException.class, e -> {
                    assertThat(e.kind()).isEqualTo(TemplateException.Kind.UNREADABLE);
                    assertThat(e.getMessage()).contains("nope");
                });
    }

    @Test
    void aFileThatIsNotUtf8IsRefused(@TempDir Path dir) throws IOException {
        Files.createDirectories(dir.resolve("bad"));
        Files.write(dir.resolve("bad/subject.peb"), new byte[]{'H', (byte) 0xE9, 'l'});
        assertThatThrownBy(() -> TemplateCatalogue.load(dir))
                .isInstanceOfSatisfying(TemplateException.class, e -> assertThat(e.getMessage()).contains("bad/subject.peb").contains("UTF-8"));
    }
}
