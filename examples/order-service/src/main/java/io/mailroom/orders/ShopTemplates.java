package io.mailroom.orders;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The shop's email templates ({@code order_confirmation}, {@code order_shipped},
 * {@code order_cancelled} and the shop's footer wording), which Mailroom does not ship: they sit in
 * {@code examples/order-service/templates} and, inside the shop's jar, under {@value #RESOURCE}. A
 * dispatcher reads templates from a directory ({@code MAILROOM_TEMPLATES_DIR}), so what runs the
 * shop and a dispatcher in one process (the demo, the acceptance tests) copies them into one.
 */
public final class ShopTemplates {

    public static final String RESOURCE = "io/mailroom/orders/templates";

    private ShopTemplates() {
    }

    private static Path temporaryCopy;

    /** One copy per JVM in a temporary directory (tools and tests that start dispatchers), made on first use. */
    public static synchronized Path temporaryCopy() {
        if (temporaryCopy == null) {
            try {
                temporaryCopy = copyTo(Files.createTempDirectory("mailroom-shop-templates"));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a directory for the shop's templates", e);
            }
        }
        return temporaryCopy;
    }

    /** Copies the templates into {@code directory} (created if missing) and returns it. */
    public static Path copyTo(Path directory) {
        URL url = ShopTemplates.class.getClassLoader().getResource(RESOURCE);
        if (url == null) {
            throw new IllegalStateException("the shop's templates (" + RESOURCE + ") are missing from the class path");
        }
        try {
            if ("jar".equals(url.getProtocol())) {
                FileSystem jar;
                try {
                    jar = FileSystems.newFileSystem(url.toURI(), Map.of());
                } catch (FileSystemAlreadyExistsException openElsewhere) {
                    // the template catalogue keeps the same jar open: share it, leave it open
                    copy(Path.of(url.toURI()), directory);
                    return directory;
                }
                try (jar) {
                    copy(jar.getPath(RESOURCE), directory);
                }
            } else {
                copy(Path.of(url.toURI()), directory);
            }
            return directory;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy the shop's templates to " + directory, e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException("the shop's templates are at an unreadable location: " + url, e);
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(from)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        for (Path file : files) {
            Path target = to;
            for (Path part : from.relativize(file)) {
                target = target.resolve(part.toString());
            }
            Files.createDirectories(target.getParent());
            try (InputStream in = Files.newInputStream(file)) {
                Files.copy(in, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }
}
