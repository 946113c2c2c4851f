package io.mailroom.outbox;

/**
 * A configuration value was missing, malformed or out of range. The message names the setting (an
 * environment variable, an option, a builder field: {@code MAILROOM_SMTP_PORT must be 1..65535, got 0})
 * so it can be fixed without reading code; {@link #setting()} gives the name alone.
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
}
