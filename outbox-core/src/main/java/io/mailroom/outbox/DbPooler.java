package io.mailroom.outbox;

import java.util.Locale;

/**
 * The two settings every Mailroom process reads the same way when its pool may sit behind a
 * transaction-mode pooler: {@code MAILROOM_DB_POOLER} ({@code none} or {@code pgbouncer}) and
 * {@code MAILROOM_DB_SESSION_SETTINGS} (see {@link SessionSettings}). One reading for the dispatcher
 * service, the support CLI and the example order service, so a value means the same everywhere and a
 * bad one gets the same message.
 */
public final class DbPooler {

    public static final String ENV_POOLER = "MAILROOM_DB_POOLER";
    public static final String ENV_SESSION_SETTINGS = "MAILROOM_DB_SESSION_SETTINGS";

    private DbPooler() {
    }

    /** Whether {@code value} of {@link #ENV_POOLER} names a transaction-mode pooler; null or blank is none. */
    public static boolean pooled(String value) {
        String pooler = value == null || value.isBlank() ? "none" : value.trim().toLowerCase(Locale.ROOT);
        if (!pooler.equals("none") && !pooler.equals("pgbouncer")) {
            throw new InvalidSettingException(ENV_POOLER, ENV_POOLER
                    + " must be 'none' or 'pgbouncer' (any pooler in transaction mode), got '" + pooler + "'");
        }
        return pooler.equals("pgbouncer");
    }

    /**
     * {@code value} of {@link #ENV_SESSION_SETTINGS}; null or blank: per transaction behind a pooler,
     * per session directly. Per session behind a pooler is refused.
     */
    public static SessionSettings sessionSettings(boolean pooled, String value) {
        if (value == null || value.isBlank()) {
            return pooled ? SessionSettings.TRANSACTION : SessionSettings.SESSION;
        }
        SessionSettings settings;
        try {
            settings = SessionSettings.parse(ENV_SESSION_SETTINGS, value);
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException(ENV_SESSION_SETTINGS, e.getMessage());
        }
        if (pooled && settings == SessionSettings.SESSION) {
            throw new InvalidSettingException(ENV_SESSION_SETTINGS, ENV_SESSION_SETTINGS + "=session cannot"
                    + " work behind " + ENV_POOLER + "=pgbouncer: each transaction may get another server session;"
                    + " use 'transaction' (SET LOCAL per transaction) or 'server' (ALTER ROLE ... SET)");
        }
        return settings;
    }
}
