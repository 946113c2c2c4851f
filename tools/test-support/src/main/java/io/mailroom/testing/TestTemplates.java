package io.mailroom.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * Neutral email templates for library tests, so none needs an application's templates: {@code receipt}
 * (data {@code customer.name} and {@code order.id, currency, total, createdAt, lines[name, quantity,
 * amount]}) and {@code welcome} ({@code customer.name}), each in English and Vietnamese. A dispatcher
 * reads templates from a directory, so they are copied into one per JVM.
 */
public final class TestTemplates {

    public static final String RECEIPT = "receipt";
    public static final String WELCOME = "welcome";

    private static final String RESOURCE = "io/mailroom/testing/templates/";
    private static final List<String> FILES = List.of("subject.peb", "html.peb", "text.peb", "messages.properties",
            "messages_vi.properties", "sample.json");
    private static Path directory;

    private TestTemplates() {
    }

    /** A directory holding the test templates (for {@code MAILROOM_TEMPLATES_DIR} or {@code TemplateCatalogue.load}). */
    public static synchronized Path directory() {
        if (directory == null) {
            try {
                Path dir = Files.createTempDirectory("mailroom-test-templates");
                for (String template : List.of(RECEIPT, WELCOME)) {
                    Files.createDirectories(dir.resolve(template));
                    for (String file : FILES) {
                        try (InputStream in = TestTemplates.class.getClassLoader().getResourceAsStream(RESOURCE + template + "/" + file)) {
                            if (in == null) {
                                throw new IllegalStateException("test template file missing: " + RESOURCE + template + "/" + file);
                            }
                            Files.copy(in, dir.resolve(template).resolve(file), StandardCopyOption.REPLACE_EXISTING);
                        }
                    }
                }
                directory = dir;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the test templates", e);
            }
        }
        return directory;
    }
}
