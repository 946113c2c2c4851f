package io.mailroom.templates;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A template's version per locale: a hash of every file its rendering can read for that locale (its
 * own files and the shared ones, of the messages files only the locale's fallback chain, never its
 * sample), so the idempotency fingerprint of an email changes exactly when what would be rendered
 * for it can change, and never because of an unrelated template. Computed once per snapshot.
 */
final class TemplateVersions {

    private final TemplateFiles files;
    private final Map<String, String> versions = new ConcurrentHashMap<>();

    TemplateVersions(TemplateFiles files) {
        this.files = files;
    }

    /**
     * The template's version for a locale: its name and the first 16 hex digits of a SHA-256 over
     * every file the render can read (the template's folder and the shared files, but of the
     * messages files only those of the locale's fallback chain).
     */
    String version(String name, Locale locale) {
        return versions.computeIfAbsent(name + "|" + locale.toLanguageTag(), k -> {
            Set<String> localeChain = Set.copyOf(Messages.files(name, locale));
            MessageDigest sha;
            try {
                sha = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            sha.update("mailroom-template-v1\0".getBytes(StandardCharsets.UTF_8));
            for (String rel : files.paths()) {
                String t = TemplateFiles.templateOf(rel);
                boolean messagesFile = rel.substring(rel.lastIndexOf('/') + 1).startsWith("messages");
                boolean mine = name.equals(t) || t == null;
                if (!mine || rel.equals(name + "/sample.json") || (messagesFile && !localeChain.contains(rel))) {
                    continue;
                }
                sha.update(rel.getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
                sha.update(files.read(rel).orElseThrow().getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
            }
            return name + "@" + HexFormat.of().formatHex(sha.digest(), 0, 8);
        });
    }
}
