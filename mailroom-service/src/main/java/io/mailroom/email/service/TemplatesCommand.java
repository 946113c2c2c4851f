package io.mailroom.email.service;

import io.mailroom.templates.RenderedTemplate;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.templates.TemplateException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.IllformedLocaleException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code mailroom templates}: the template author's loop. {@code check} loads the catalogue a
 * dispatcher would load ({@code MAILROOM_TEMPLATES_DIR} over the built-in templates), compiles
 * every file and renders each template's {@code sample.json} in each of its locales;
 * {@code render} renders one template with a data file, prints the subject and the text part and
 * writes the HTML part to a file to open in a browser.
 */
@Command(name = "templates", mixinStandardHelpOptions = true, description = "Check and render email templates.",
        subcommands = {TemplatesCommand.Check.class, TemplatesCommand.Render.class})
public final class TemplatesCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return 0;
    }

    /** The directory option both subcommands share, defaulting to the dispatcher's setting. */
    static class DirectoryOption {
        @Option(names = "--dir", paramLabel = "DIR",
                description = "template directory laid over the built-in templates (default: $MAILROOM_TEMPLATES_DIR, else built-in only)")
        Path dir;

        @Option(names = "--no-builtins", description = "use only the directory's templates")
        boolean noBuiltins;

        Map<String, String> env = System.getenv();

        TemplateCatalogue load() throws TemplateException {
            Path d = dir;
            if (d == null && env.get(DispatchEnv.TEMPLATES_DIR) != null && !env.get(DispatchEnv.TEMPLATES_DIR).isBlank()) {
                d = Path.of(env.get(DispatchEnv.TEMPLATES_DIR));
            }
            if (noBuiltins) {
                if (d == null) {
                    throw new CommandLine.ParameterException(new CommandLine(this), "--no-builtins needs --dir or " + DispatchEnv.TEMPLATES_DIR);
                }
                return TemplateCatalogue.loadOnly(d);
            }
            return TemplateCatalogue.load(d);
        }
    }

    @Command(name = "check", mixinStandardHelpOptions = true,
            description = "Compile every template and render each sample.json in each locale; exit 1 on any problem.")
    static final class Check implements Callable<Integer> {
        @CommandLine.Mixin
        DirectoryOption directory = new DirectoryOption();

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            TemplateCatalogue catalogue;
            try {
                catalogue = directory.load();
            } catch (TemplateException e) {
                err.println("mailroom templates: " + e.getMessage());
                return 1;
            }
            List<TemplateException> problems = catalogue.check();
            for (String name : catalogue.names()) {
                String version;
                try {
                    version = catalogue.version(name, Locale.ROOT);
                } catch (TemplateException e) {
                    version = "(unusable)";
                }
                List<String> wording = new java.util.ArrayList<>(List.of("default"));
                wording.addAll(catalogue.locales(name));
                out.printf("%-28s %-36s wording: %s  (%s)%n", name, version, String.join(", ", wording),
                        catalogue.origin(name + "/subject.peb").replaceFirst("/?subject\\.peb$", ""));
            }
            for (TemplateException p : problems) {
                err.println("problem: " + p.getMessage());
            }
            out.println(problems.isEmpty()
                    ? catalogue.names().size() + " templates, no problems"
                    : catalogue.names().size() + " templates, " + problems.size() + " problem(s)");
            out.flush();
            err.flush();
            return problems.isEmpty() ? 0 : 1;
        }
    }

    @Command(name = "render", mixinStandardHelpOptions = true,
            description = "Render one template: print the subject and text part, write the HTML part to a file.")
    static final class Render implements Callable<Integer> {
        @CommandLine.Mixin
        DirectoryOption directory = new DirectoryOption();

        @Parameters(index = "0", paramLabel = "NAME", description = "template name, e.g. welcome")
        String name;

        @Option(names = "--data", required = true, paramLabel = "FILE", description = "template data: a JSON object")
        Path data;

        @Option(names = "--locale", defaultValue = "en", paramLabel = "TAG", description = "BCP 47 language tag (default: ${DEFAULT-VALUE})")
        String locale;

        @Option(names = "--html", paramLabel = "FILE", description = "where to write the HTML part (default: NAME.TAG.html)")
        Path html;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            Locale tag;
            try {
                tag = new Locale.Builder().setLanguageTag(locale).build();
            } catch (IllformedLocaleException e) {
                err.println("mailroom templates: --locale '" + locale + "' is not a BCP 47 language tag");
                return 2;
            }
            try {
                String json = Files.readString(data, StandardCharsets.UTF_8);
                RenderedTemplate r = directory.load().renderJson(name, tag, json);
                Path target = html != null ? html : Path.of(name + "." + tag.toLanguageTag() + ".html");
                Files.writeString(target, r.html(), StandardCharsets.UTF_8);
                out.println("Version: " + r.version());
                out.println("Subject: " + r.subject());
                out.println();
                out.print(r.text());
                out.println();
                out.println("HTML part written to " + target.toAbsolutePath());
                out.flush();
                return 0;
            } catch (NoSuchFileException e) {
                err.println("mailroom templates: no such file: " + e.getFile());
                return 2;
            } catch (IOException | java.io.UncheckedIOException e) {
                err.println("mailroom templates: cannot read or write a file: " + e.getMessage());
                return 2;
            } catch (TemplateException e) {
                err.println("mailroom templates: " + e.getMessage());
                return 1;
            } finally {
                err.flush();
            }
        }
    }
}
