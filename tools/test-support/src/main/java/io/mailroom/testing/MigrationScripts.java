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

/** Reads the Flyway scripts on the class path, to name a template database after their content. */
final class MigrationScripts {

    static final String LOCATION = "db/migration";

    private MigrationScripts() {
    }

    /** First 16 hex digits of a SHA-256 over every script's path and bytes, in path order. */
    static String fingerprint() {
        Map<String, byte[]> scripts = read();
        if (scripts.isEmpty()) {
            throw new IllegalStateException("No Flyway migrations on the class path under " + LOCATION
                    + ": add a test dependency on io.mailroom:db");
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

    private static Map<String, byte[]> read() {
        Map<String, byte[]> scripts = new TreeMap<>();
        try {
            Enumeration<URL> roots = Thread.currentThread().getContextClassLoader().getResources(LOCATION);
            while (roots.hasMoreElements()) {
                URL root = roots.nextElement();
                switch (root.getProtocol()) {
                    case "file" -> readDirectory(Paths.get(root.toURI()), scripts);
                    case "jar" -> readJar((JarURLConnection) root.openConnection(), scripts);
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

    private static void readJar(JarURLConnection connection, Map<String, byte[]> scripts) throws IOException {
        connection.setUseCaches(false);
        try (JarFile jar = connection.getJarFile()) {
            Enumeration<JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                JarEntry entry = entries.nextElement();
                if (!entry.isDirectory() && entry.getName().startsWith(LOCATION + "/")) {
                    try (InputStream in = jar.getInputStream(entry)) {
                        scripts.put(entry.getName().substring(LOCATION.length() + 1), in.readAllBytes());
                    }
                }
            }
        }
    }
}
