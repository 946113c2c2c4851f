package io.mailroom.acceptance;

import io.mailroom.orders.ShopTemplates;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.templates.TemplateException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The example shop as the acceptance tests run it beside a dispatcher: its templates in a directory of their own. */
public final class Shop {

    private static Path templates;

    private Shop() {
    }

    /** A directory holding the shop's templates, as {@code MAILROOM_TEMPLATES_DIR} names it (one copy per JVM). */
    public static synchronized Path templatesDir() {
        if (templates == null) {
            try {
                templates = ShopTemplates.copyTo(Files.createTempDirectory("mailroom-shop-templates"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return templates;
    }

    /** The catalogue a dispatcher serving the shop loads: the shop's templates over the built-in layouts. */
    public static TemplateCatalogue templates() {
        try {
            return TemplateCatalogue.load(templatesDir());
        } catch (TemplateException e) {
            throw new IllegalStateException(e);
        }
    }
}
