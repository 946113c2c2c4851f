package io.mailroom.templates;

import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Per-locale wording of one template: {@code messages_vi.properties} beside the template, then the
 * shared ones at the top level, each from the most specific locale to the default file
 * ({@code messages_vi_VN}, {@code messages_vi}, {@code messages}). Files are UTF-8, so translators
 * write Vietnamese as they read it. Placeholders are named, {@code {name}}, filled from the
 * arguments a template passes: {@code t("greeting", {"name": customer.name})}. There is no
 * MessageFormat quoting to trip over.
 */
final class Messages {

    private static final Pattern PLACEHOLDER = Pattern.compile("\\{([A-Za-z_][A-Za-z0-9_]*)}");

    private final List<Properties> chain;
    /** The messages used so far, each split at its placeholders once. */
    private final Map<String, Compiled> compiled = new ConcurrentHashMap<>();

    private Messages(List<Properties> chain) {
        this.chain = chain;
    }

    /** The files {@link #load} reads for this template and locale, most specific first. */
    static List<String> files(String template, Locale locale) {
        List<String> suffixes = new ArrayList<>();
        if (!locale.getLanguage().isEmpty()) {
            if (!locale.getCountry().isEmpty()) {
                suffixes.add("_" + locale.getLanguage() + "_" + locale.getCountry());
            }
            suffixes.add("_" + locale.getLanguage());
        }
        suffixes.add("");
        List<String> files = new ArrayList<>();
        for (String prefix : List.of(template + "/", "")) {
            for (String suffix : suffixes) {
                files.add(prefix + "messages" + suffix + ".properties");
            }
        }
        return files;
    }

    static Messages load(TemplateFiles files, String template, Locale locale) throws TemplateException {
        List<Properties> chain = new ArrayList<>();
        for (String name : files(template, locale)) {
            Optional<String> text = files.read(name);
            if (text.isPresent()) {
                Properties p = new Properties();
                try {
                    p.load(new StringReader(text.get()));
                } catch (IOException | IllegalArgumentException e) {
                    throw new TemplateException(TemplateException.Kind.SYNTAX, template, name + " is not a valid properties file: " + e.getMessage(), e);
                }
                chain.add(p);
            }
        }
        return new Messages(chain);
    }

    /** The message for the key, placeholders filled; empty when no file has the key. */
    Optional<String> format(String key, Map<?, ?> args) throws MissingPlaceholder {
        Compiled message = compiled.get(key);
        if (message == null) {
            String pattern = pattern(key);
            if (pattern == null) {
                return Optional.empty();
            }
            message = Compiled.of(pattern);
            compiled.putIfAbsent(key, message);
        }
        return Optional.of(message.fill(key, args));
    }

    private String pattern(String key) {
        for (Properties p : chain) {
            String pattern = p.getProperty(key);
            if (pattern != null) {
                return pattern;
            }
        }
        return null;
    }

    /**
     * A message split once at its placeholders: {@code texts} around {@code names}, one more text
     * than names. Filling it is a few appends instead of a regular expression run per email.
     */
    private record Compiled(String[] texts, String[] names) {

        static Compiled of(String pattern) {
            Matcher m = PLACEHOLDER.matcher(pattern);
            List<String> texts = new ArrayList<>();
            List<String> names = new ArrayList<>();
            int at = 0;
            while (m.find()) {
                texts.add(pattern.substring(at, m.start()));
                names.add(m.group(1));
                at = m.end();
            }
            texts.add(pattern.substring(at));
            return new Compiled(texts.toArray(String[]::new), names.toArray(String[]::new));
        }

        String fill(String key, Map<?, ?> args) throws MissingPlaceholder {
            if (names.length == 0) {
                return texts[0];
            }
            StringBuilder out = new StringBuilder(texts[0].length() + 16 * names.length);
            out.append(texts[0]);
            for (int i = 0; i < names.length; i++) {
                Object value = args == null ? null : args.get(names[i]);
                if (value == null) {
                    throw new MissingPlaceholder(key, names[i]);
                }
                out.append(value).append(texts[i + 1]);
            }
            return out.toString();
        }
    }

    static final class MissingPlaceholder extends Exception {
        final String key;
        final String placeholder;

        MissingPlaceholder(String key, String placeholder) {
            super("message '" + key + "' needs {" + placeholder + "}, which the template did not pass");
            this.key = key;
            this.placeholder = placeholder;
        }
    }
}
