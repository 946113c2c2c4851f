package io.mailroom.outbox;

import java.util.Comparator;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A configuration value was missing, malformed or out of range. The message names the setting (an
 * environment variable, an option, a builder field: {@code MAILROOM_SMTP_PORT must be 1..65535, got 0})
 * so it can be fixed without reading code; {@link #setting()} gives the name alone.
 *
 * <p>A library's records name their settings as their callers' code knows them ({@code support port});
 * a shell that reads them from elsewhere (its environment) turns those names into its own with
 * {@link #renamed}, so that its user is pointed at what they set.
 */
public final class InvalidSettingException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String setting;

    public InvalidSettingException(String setting, String message) {
        super(message);
        this.setting = setting;
    }

    public String setting() {
        return setting;
    }

    /**
     * This error as the caller names its settings: {@link #setting()} and each key of {@code names}
     * that stands as a whole word in the message replaced by its value ({@code support port} by
     * {@code MAILROOM_SUPPORT_PORT}). Names not in the map stay as they are.
     */
    public InvalidSettingException renamed(Map<String, String> names) {
        if (names.isEmpty()) {
            return this;
        }
        String alternatives = names.keySet().stream().sorted(Comparator.comparingInt(String::length).reversed())
                .map(Pattern::quote).collect(Collectors.joining("|"));
        Matcher m = Pattern.compile("(?<!\\w)(?:" + alternatives + ")(?!\\w)").matcher(getMessage());
        String message = m.replaceAll(r -> Matcher.quoteReplacement(names.get(r.group())));
        InvalidSettingException renamed = new InvalidSettingException(
                setting == null ? null : names.getOrDefault(setting, setting), message);
        renamed.initCause(this);
        return renamed;
    }
}
