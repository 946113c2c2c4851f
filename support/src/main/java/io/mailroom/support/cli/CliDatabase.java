package io.mailroom.support.cli;

import io.mailroom.outbox.DbTimeouts;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.SessionSettings;

import java.util.Objects;

/**
 * The database the support commands use where the command line does not name one, and how they
 * reach it, as the program that embeds them resolved it ({@code mailroom support} reads its
 * environment). {@code --db-url}, {@code --db-user}, {@code --db-password} and {@code --schema}
 * override the first four.
 *
 * @param url             JDBC URL, or null: {@code --db-url} is then required
 * @param user            database user, or null for the URL's
 * @param password        database password, or null for the URL's
 * @param schema          the schema of Mailroom's tables, or null for the default
 * @param timeouts        network timeouts added to the URL where it sets none ({@link DbTimeouts#jdbcUrl})
 * @param pooled          the URL goes through a transaction-mode pooler: no named server-side statements
 * @param sessionSettings where the actions' timeouts are set
 * @param urlSetting      where a user sets the URL instead of {@code --db-url} (an environment variable),
 *                        named in errors; null: only {@code --db-url} is named
 */
public record CliDatabase(String url, String user, String password, String schema, DbTimeouts timeouts,
                          boolean pooled, SessionSettings sessionSettings, String urlSetting) {

    public CliDatabase {
        Objects.requireNonNull(timeouts, "timeouts");
        Objects.requireNonNull(sessionSettings, "sessionSettings");
        if (pooled && sessionSettings == SessionSettings.SESSION) {
            throw new InvalidSettingException("sessionSettings", "sessionSettings=session cannot work behind a"
                    + " transaction-mode pooler: each transaction may get another server session");
        }
    }

    /** {@code url} (null: none) reached directly, with the default timeouts and settings per session. */
    public static CliDatabase direct(String url) {
        return new CliDatabase(url, null, null, null, DbTimeouts.DEFAULTS, false, SessionSettings.SESSION, null);
    }

    /** The password masked. */
    @Override
    public String toString() {
        return "CliDatabase[url=" + (url == null ? null : url.replaceAll("(?i)(password=)[^&]*", "$1****")) + ", user=" + user
                + ", password=" + (password == null ? null : "****") + ", schema=" + schema + ", timeouts[" + timeouts
                + "], pooled=" + pooled + ", sessionSettings=" + sessionSettings + ", urlSetting=" + urlSetting + "]";
    }
}
