package io.mailroom.templates;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * An immutable snapshot of the template files: an operator's directory laid over the built-in
 * defaults, so a file in the directory replaces the built-in file of the same relative path and a
 * new folder adds a template. Everything is read once, when the snapshot is taken, so what is
 * rendered is exactly what was hashed into the templates' versions, however the directory changes
 * afterwards. Paths are relative and '/'-separated; files are decoded strictly as UTF-8.
 *
 * <p>Layout: each top-level folder is one template ({@code receipt/subject.peb},
 * {@code html.peb}, {@code text.peb}, {@code messages*.properties}); files at the top level and in
 * folders whose name starts with '_' (layouts, partials, the style sheet, shared messages) are
 * shared by every template. Only {@code .peb}, {@code .css}, {@code .properties} and {@code .json} (sample data) files are read.
 */
final class TemplateFiles {

    static final String BUILTIN_RESOURCE = "io/mailroom/templates/builtin";
    static final int MAX_FILES = 2_000;
    static final long MAX_TOTAL_BYTES = 16L * 1024 * 1024;

    private static final Pattern SAFE_PATH = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*");
    private static final Pattern READ = Pattern.compile(".*\\.(peb|css|properties|json)");

    private final SortedMap<String, String> files;
    private final Map<String, String> origins;
    private final SortedSet<String> templateNames;

    private TemplateFiles(SortedMap<String, String> files, Map<String, String> origins) {
        this.files = Collections.unmodifiableSortedMap(files);
        this.origins = Map.copyOf(origins);
        SortedSet<String> names = new TreeSet<>();
        for (String rel : files.keySet()) {
            String t = templateOf(rel);
            if (t != null) {
                names.add(t);
            }
        }
        this.templateNames = Collections.unmodifiableSortedSet(names); // asked on every render
    }

    /** Reads the operator's directory (may be null) over the built-in templates (when asked for). */
    static TemplateFiles load(Path directory, boolean withBuiltins) throws TemplateException {
        List<Path> roots = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        if (directory != null) {
            if (!Files.isDirectory(directory)) {
                throw new TemplateException(TemplateException.Kind.UNREADABLE, null,
                        "template directory " + directory.toAbsolutePath() + " does not exist or is not a directory");
            }
            roots.add(directory);
            labels.add(directory.toAbsolutePath().normalize() + "/");
        }
        if (withBuiltins) {
            roots.add(builtinRoot());
            labels.add("built-in ");
        }
        SortedMap<String, String> files = new TreeMap<>();
        Map<String, String> origins = new TreeMap<>();
        long total = 0;
        for (int i = 0; i < roots.size(); i++) {
            Path root = roots.get(i);
            for (Path file : walk(root)) {
                String rel = relative(root, file);
                if (files.containsKey(rel) || !isSafe(rel) || !READ.matcher(rel).matches()) {
                    continue; // replaced by the directory, hidden, or not a template file
                }
                String text = decode(rel, read(file));
                total += text.length();
                if (files.size() >= MAX_FILES || total > MAX_TOTAL_BYTES) {
                    throw new TemplateException(TemplateException.Kind.UNREADABLE, null, "more than " + MAX_FILES
                            + " files or " + (MAX_TOTAL_BYTES >> 20) + " MiB of templates under " + labels.get(i).trim());
                }
                files.put(rel, text);
                origins.put(rel, labels.get(i) + rel);
            }
        }
        return new TemplateFiles(files, origins);
    }

    /** A snapshot of the given files, for tests and tools. */
    static TemplateFiles of(Map<String, String> files) {
        SortedMap<String, String> copy = new TreeMap<>(files);
        Map<String, String> origins = new TreeMap<>();
        copy.keySet().forEach(k -> origins.put(k, k));
        return new TemplateFiles(copy, origins);
    }

    private static Path builtinRoot() throws TemplateException {
        URL url = TemplateFiles.class.getClassLoader().getResource(BUILTIN_RESOURCE);
        if (url == null) {
            throw new TemplateException(TemplateException.Kind.UNREADABLE, null, "the built-in templates are missing from the class path");
        }
        try {
            URI uri = url.toURI();
            if ("jar".equals(uri.getScheme())) {
                try {
                    FileSystems.newFileSystem(uri, Map.of());
                } catch (FileSystemAlreadyExistsException alreadyOpen) {
                    // opened by an earlier load: Path.of(uri) below finds it
                }
            }
            return Path.of(uri);
        } catch (URISyntaxException | IOException e) {
            throw new TemplateException(TemplateException.Kind.UNREADABLE, null, "cannot open the built-in templates at " + url, e);
        }
    }

    private static List<Path> walk(Path root) throws TemplateException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(Files::isRegularFile).sorted().toList();
        } catch (IOException | UncheckedIOException e) {
            throw new TemplateException(TemplateException.Kind.UNREADABLE, null, "cannot list " + root + ": " + e, e);
        }
    }

    private static byte[] read(Path file) throws TemplateException {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new TemplateException(TemplateException.Kind.UNREADABLE, null, "cannot read " + file + ": " + e, e);
        }
    }

    private static String decode(String rel, byte[] bytes) throws TemplateException {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new TemplateException(TemplateException.Kind.SYNTAX, templateOf(rel), rel + " is not valid UTF-8", e);
        }
    }

    /** True for a path a template may name: relative, no '..', no hidden files. */
    static boolean isSafe(String relative) {
        return relative != null && SAFE_PATH.matcher(relative).matches() && !relative.contains("..");
    }

    /** The template a file belongs to, or null for a shared file. */
    static String templateOf(String relative) {
        int slash = relative.indexOf('/');
        return slash > 0 && relative.charAt(0) != '_' ? relative.substring(0, slash) : null;
    }

    boolean exists(String relative) {
        return files.containsKey(relative);
    }

    Optional<String> read(String relative) {
        return Optional.ofNullable(files.get(relative));
    }

    /** Every file, by relative path. */
    SortedSet<String> paths() {
        return new TreeSet<>(files.keySet());
    }

    /** Top-level folders not starting with '_': one template each. */
    SortedSet<String> templateNames() {
        return templateNames;
    }

    /** Where a file was read from, for error messages: the directory's path, or "built-in". */
    String origin(String relative) {
        return origins.getOrDefault(relative, relative);
    }

    private static String relative(Path root, Path file) {
        StringBuilder b = new StringBuilder();
        for (Path part : root.relativize(file)) {
            if (!b.isEmpty()) {
                b.append('/');
            }
            b.append(part.toString().replace("/", ""));
        }
        return b.toString();
    }
}
