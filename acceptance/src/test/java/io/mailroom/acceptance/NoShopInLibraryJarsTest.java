package io.mailroom.acceptance;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mailroom ships no shop: neither mailroom.jar nor any library module's jar holds a class of the
 * example shop ({@code io/mailroom/orders}) or one of its templates ({@code order_*}). The library
 * artifacts are the ones on this module's class path (the reactor's jars, or their classes folders),
 * mailroom.jar the one mailroom-service built beside them.
 */
class NoShopInLibraryJarsTest {

    static final List<String> LIBRARY_MODULES = List.of("db", "outbox-core", "email-api", "idempotency-store",
            "delivery-events", "email-templates", "email-dispatcher", "support", "mailroom-service");
    private static final Pattern SHOP = Pattern.compile("(^|.*/)(io/mailroom/orders/.*|order_[a-z_]+/.*|order_[a-z_]+)$");

    @Test
    void noLibraryArtifactOnTheClassPathHoldsAShopClassOrTemplate() throws IOException {
        Map<String, Path> artifacts = new LinkedHashMap<>();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            Path p = Path.of(entry).toAbsolutePath().normalize();
            for (String module : LIBRARY_MODULES) {
                if (p.getParent() != null && p.getParent().endsWith(Path.of(module, "target"))
                        && !p.toString().contains("test-classes")) {
                    artifacts.put(module, p);
                }
            }
        }
        assertThat(artifacts.keySet()).as("every library module's artifact is on the class path").containsAll(LIBRARY_MODULES);
        for (Map.Entry<String, Path> a : artifacts.entrySet()) {
            assertThat(shopEntries(a.getValue())).as(a.getKey() + " (" + a.getValue() + ")").isEmpty();
        }
    }

    @Test
    void theServiceJarHoldsNoShopClassOrTemplate() throws IOException {
        Path serviceJar = Path.of("..", "mailroom-service", "target", "mailroom.jar").toAbsolutePath().normalize();
        assertThat(serviceJar).as("build it first: ./mvnw -pl acceptance -am verify").exists();
        List<String> entries = entries(serviceJar);
        assertThat(entries).as("mailroom.jar is the fat jar").contains("io/mailroom/email/service/DispatcherService.class",
                "io/mailroom/templates/builtin/_layouts/html.peb");
        assertThat(shopEntries(serviceJar)).isEmpty();
    }

    /** The check itself: it finds the shop where the shop is. */
    @Test
    void theShopsOwnArtifactIsWhatTheCheckFinds() throws IOException {
        Path shop = null;
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            Path p = Path.of(entry).toAbsolutePath().normalize();
            if (p.getParent() != null && p.getParent().endsWith(Path.of("order-service", "target"))) {
                shop = p;
            }
        }
        assertThat(shop).as("the example shop on the class path").isNotNull();
        assertThat(shopEntries(shop)).contains("io/mailroom/orders/LegacyOrderPayload.class",
                "io/mailroom/orders/templates/order_confirmation/html.peb");
    }

    static List<String> shopEntries(Path artifact) throws IOException {
        return entries(artifact).stream().filter(e -> SHOP.matcher(e).matches()).toList();
    }

    private static List<String> entries(Path artifact) throws IOException {
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(artifact)) {
            try (Stream<Path> walk = Files.walk(artifact)) {
                walk.filter(Files::isRegularFile).forEach(f -> names.add(artifact.relativize(f).toString().replace('\\', '/')));
            }
        } else {
            try (ZipFile zip = new ZipFile(artifact.toFile())) {
                Enumeration<? extends ZipEntry> e = zip.entries();
                while (e.hasMoreElements()) {
                    names.add(e.nextElement().getName());
                }
            }
        }
        return names;
    }
}
