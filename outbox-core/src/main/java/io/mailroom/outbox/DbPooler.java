package io.mailroom.outbox;

import java.util.Locale;

/**
 * The two choices every Mailroom process makes the same way when its pool may sit behind a
 * transaction-mode pooler: whether it does ({@code none} or {@code pgbouncer}), and where session
 * settings are made ({@link SessionSettings}). One parser for the dispatcher service, the support
 * CLI and the example order service, so a value means the same everywhere and a bad one gets the
 * same message. It reads no environment: each caller passes the value and the name of the setting
 * it came from (an environment variable, an option), which every error names.
 */
public final class DbPooler {

    private DbPooler() {
    }

    /** Whether {@code value} of {@code setting} names a transaction-mode pooler; null or blank is none. */
    public static boolean pooled(String setting, String value) {
        String pooler = value == null || value.isBlank() ? "none" : value.trim().toLowerCase(Locale.ROOT);
        if (!pooler.equals("none") && !pooler.equals("pgbouncer")) {
            throw new InvalidSettingException(setting, setting
                    + " must be 'none' or 'pgbouncer' (any pooler in transaction mode), got '" + pooler + "'");
        }
        return pooler.equals("pgbouncer");
    }

    /**
     * {@code value} of {@code setting}; null or blank: per transaction behind a pooler, per session
     * directly. Per session behind a pooler ({@code poolerSetting} said so) is refused.
     */
    public static SessionSettings sessionSettings(String poolerSetting, String setting, boolean pooled, String value) {
        if (value == null || value.isBlank()) {
            return pooled ? SessionSettings.TRANSACTION : SessionSettings.SESSION;
        }
        SessionSettings settings;
        try {
            settings = SessionSettings.parse(setting, value);
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException(setting, e.getMessage());
        }
        if (pooled && settings == SessionSettings.SESSION) {
            throw new InvalidSettingException(setting, setting + "=session cannot"
                    + " work behind " + poolerSetting + "=pgbouncer: each transaction may get another server session;"
                    + " use 'transaction' (SET LOCAL per transaction) or 'server' (ALTER ROLE ... SET)");
        }
        return settings;
    }
}
