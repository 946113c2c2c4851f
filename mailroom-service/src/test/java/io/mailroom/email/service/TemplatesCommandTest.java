package io.mailroom.email.service;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class TemplatesCommandTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cli = MailroomCli.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    /** The test templates (tools/test-support), as an operator's MAILROOM_TEMPLATES_DIR over the built-in layouts. */
    private static final String TEMPLATES = io.mailroom.testing.TestTemplates.directory().toString();

    @Test
    void checkListsTheTemplatesAndPasses() {
        assertThat(run("templates", "check", "--dir", TEMPLATES)).isEqualTo(0);
        assertThat(out.toString()).contains("receipt").contains("receipt@").contains("welcome@").contains("no problems");
    }

    @Test
    void checkFailsOnABrokenTemplateAndNamesTheFile(@TempDir Path dir) throws Exception {
        Path t = Files.createDirectories(dir.resolve("shipped"));
        Files.writeString(t.resolve("subject.peb"), "Shipped {{ order.id }}");
        Files.writeString(t.resolve("html.peb"), "<p>{% for x in items %}never ends</p>");
        // no text.peb: the text part is required

        assertThat(run("templates", "check", "--dir", dir.toString())).isEqualTo(1);
        assertThat(err.toString()).contains("shipped/html.peb").contains("has no text.peb");
        assertThat(out.toString()).doesNotContain("order_"); // the built-ins are layouts, no application's templates
    }

    @Test
    void renderPrintsSubjectAndTextAndWritesTheHtml(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data.json");
        Files.writeString(data, """
                {"customer": {"name": "Trần Văn <Bảo>"}, "order": {"id": "7", "currency": "VND", "total": 45000,
                 "createdAt": "2026-12-03T09:15:00Z", "lines": [{"name": "Trà đá", "quantity": 9, "amount": 45000}]}}""");
        Path html = dir.resolve("out.html");

        assertThat(run("templates", "render", "receipt", "--dir", TEMPLATES, "--data", data.toString(), "--locale", "vi",
                "--html", html.toString())).isEqualTo(0);
        assertThat(out.toString()).contains("Subject: Biên nhận #7")
                .contains("Cảm ơn bạn, Trần Văn <Bảo>!")
                .contains("HTML part written to " + html.toAbsolutePath());
        assertThat(Files.readString(html)).contains("Trần Văn &lt;Bảo&gt;").contains("style=\"");
    }

    @Test
    void renderNamesTheMissingVariable(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data.json");
        Files.writeString(data, "{\"order\": {\"id\": \"7\"}}");
        assertThat(run("templates", "render", "receipt", "--dir", TEMPLATES, "--data", data.toString(),
                "--html", dir.resolve("x.html").toString())).isEqualTo(1);
        assertThat(err.toString()).contains("'customer'");
        assertThat(dir.resolve("x.html")).doesNotExist();
    }

    @Test
    void renderNamesAMissingDataFileAndABadLocale(@TempDir Path dir) {
        assertThat(run("templates", "render", "receipt", "--dir", TEMPLATES, "--data", dir.resolve("none.json").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no such file").contains("none.json");
        assertThat(run("templates", "render", "receipt", "--dir", TEMPLATES, "--data", "x", "--locale", "not a tag!")).isEqualTo(2);
        assertThat(err.toString()).contains("--locale 'not a tag!'");
    }
}
