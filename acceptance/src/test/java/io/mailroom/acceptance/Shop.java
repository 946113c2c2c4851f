package io.mailroom.acceptance;

import io.mailroom.orders.ShopTemplates;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.templates.TemplateException;

import java.nio.file.Path;

/** The example shop as the acceptance tests run it beside a dispatcher: its templates in a directory of their own. */
public final class Shop {

    private Shop() {
    }

    /** A directory holding the shop's templates, as {@code MAILROOM_TEMPLATES_DIR} names it (one copy per JVM). */
    public static Path templatesDir() {
        return ShopTemplates.temporaryCopy();
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
