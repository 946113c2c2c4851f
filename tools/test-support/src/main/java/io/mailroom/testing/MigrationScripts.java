package io.mailroom.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Enumeration;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Reads the Flyway scripts on the class path, to name a template database after their content:
 * Mailroom's own (always there) and the example shop's (where a test's class path has the shop).
 */
final class MigrationScripts {

    /** Mailroom's scripts (io.mailroom.db.Schema.MIGRATIONS; this module cannot depend on db). */
    static final String LOCATION = "io/mailroom/db/migration";
    /** Mailroom's schema and history table in a test database (Schema.HISTORY_TABLE, MailroomSchema.DEFAULT_NAME). */
    static final String SCHEMA = "mailroom";
    static final String HISTORY_TABLE = "mailroom_schema_history";
    /** The example shop's scripts, its schema and its own history table, when the shop is on the class path. */
    static final String SHOP_LOCATION = "io/mailroom/orders/migration";
    static final String SHOP_HISTORY_TABLE = "shop_schema_history";

    private MigrationScripts() {
    }

    /** First 16 hex digits of a SHA-256 over every script's path and bytes, in path order. */
    static String fingerprint() {
        Map<String, byte[]> scripts = read(LOCATION);
        read(SHOP_LOCATION).forEach((name, bytes) -> scripts.put("shop/" + name, bytes));
        if (scripts.isEmpty()) {
            throw new IllegalStateException("No Flyway migrations on the class path under " + LOCATION
                    + ": add a test dependency on io.mailroom:mailroom-db");
        }
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            scripts.forEach((name, bytes) -> {
                sha.update(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                sha.update((byte) 0);
                sha.update(bytes);
            });
            return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** True when the example shop's scripts are on the class path. */
    static boolean hasShop() {
        try {
            return Thread.currentThread().getContextClassLoader().getResources(SHOP_LOCATION).hasMoreElements();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Map<String, byte[]> read(String location) {
        Map<String, byte[]> scripts = new TreeMap<>();
        try {
            Enumeration<URL> roots = Thread.currentThread().getContextClassLoader().getResources(location);
            while (roots.hasMoreElements()) {
                URL root = roots.nextElement();
                switch (root.getProtocol()) {
                    case "file" -> readDirectory(Paths.get(root.toURI()), scripts);
                    case "jar" -> readJar((JarURLConnection) root.openConnection(), location, scripts);
                    default -> throw new IllegalStateException("Cannot read migrations from " + root);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        return scripts;
    }

    private static void readDirectory(Path dir, Map<String, byte[]> scripts) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.filter(Files::isRegularFile).sorted().toList()) {
                scripts.put(dir.relativize(file).toString().replace('\\', '/'), Files.readAllBytes(file));
            }
        }
    }

    private static void readJar(JarURLConnection connection, String location, Map<String, byte[]> scripts) throws IOException {
        connection.setUseCaches(false);
        try (JarFile jar = connection.getJarFile()) {
            Enumeration<JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                JarEntry entry = entries.nextElement();
                if (!entry.isDirectory() && entry.getName().startsWith(location + "/")) {
                    try (InputStream in = jar.getInputStream(entry)) {
                        scripts.put(entry.getName().substring(location.length() + 1), in.readAllBytes());
                    }
                }
            }
        }
    }
}
