package io.mailroom.email.service;

import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.support.InvalidParameterException;
import io.mailroom.support.Params;
import io.mailroom.support.SupportConfig;
import io.mailroom.support.cli.CliDatabase;
import io.mailroom.support.cli.SupportCli;
import picocli.CommandLine;

import java.util.ListResourceBundle;
import java.util.Locale;
import java.util.Map;

/**
 * The support server's and the support commands' settings as the service reads them from its
 * environment: {@code MAILROOM_SUPPORT_*} ({@link SupportConfig}) and, for {@code mailroom support},
 * the database the commands use unless their options name another ({@code MAILROOM_DB_URL},
 * {@code _USER}, {@code _PASSWORD}, {@code MAILROOM_SCHEMA}, the pooler and the network timeouts, as
 * the dispatcher reads them). Unset means the default; errors name the variable, also where the
 * support module's own checks refuse a value (they name it as its builder does, {@code support port}).
 */
final class SupportEnv {

    static final String HOST = "MAILROOM_SUPPORT_HOST";
    static final String PORT = "MAILROOM_SUPPORT_PORT";
    static final String TOKENS = "MAILROOM_SUPPORT_TOKENS";
    static final String DEMO = "MAILROOM_SUPPORT_DEMO";
    static final String SECURE_COOKIES = "MAILROOM_SUPPORT_SECURE_COOKIES";
    static final String PUBLIC_ORIGIN = "MAILROOM_SUPPORT_PUBLIC_ORIGIN";
    static final String SESSION_TTL = "MAILROOM_SUPPORT_SESSION_TTL";
    static final String THREADS = "MAILROOM_SUPPORT_HTTP_THREADS";

    static final String DB_URL = "MAILROOM_DB_URL";
    static final String DB_USER = "MAILROOM_DB_USER";
    static final String DB_PASSWORD = "MAILROOM_DB_PASSWORD";

    /** The support module's names of its settings, and the variables the service reads them from. */
    private static final Map<String, String> VARIABLES = Map.of(SupportConfig.SETTING_HOST, HOST,
            SupportConfig.SETTING_PORT, PORT, SupportConfig.SETTING_TOKENS, TOKENS, SupportConfig.SETTING_DEMO, DEMO,
            SupportConfig.SETTING_PUBLIC_ORIGIN, PUBLIC_ORIGIN, SupportConfig.SETTING_SESSION_TTL, SESSION_TTL,
            SupportConfig.SETTING_THREADS, THREADS);

    private SupportEnv() {
    }

    /** The support server's settings from {@code MAILROOM_SUPPORT_*}. */
    static SupportConfig config(Map<String, String> env) {
        try {
            SupportConfig.Builder b = SupportConfig.builder();
            String host = set(env, HOST);
            if (host != null) {
                b.host(host);
            }
            String port = set(env, PORT);
            if (port != null) {
                b.port(parseInt(PORT, port));
            }
            String tokens = env.get(TOKENS);
            if (tokens != null && !tokens.isBlank()) {
                b.tokens(tokens);
            }
            b.demo(parseBoolean(DEMO, env.get(DEMO)));
            b.secureCookies(parseBoolean(SECURE_COOKIES, env.get(SECURE_COOKIES)));
            String origin = set(env, PUBLIC_ORIGIN);
            if (origin != null) {
                b.publicOrigin(origin);
            }
            String ttl = env.get(SESSION_TTL);
            if (ttl != null && !ttl.isBlank()) {
                try {
                    b.sessionTtl(Params.duration(SESSION_TTL, ttl));
                } catch (InvalidParameterException e) {
                    throw new InvalidSettingException(SESSION_TTL, SESSION_TTL + " must be a duration such as 8h or PT30M");
                }
            }
            String threads = set(env, THREADS);
            if (threads != null) {
                b.maxThreads(parseInt(THREADS, threads));
            }
            return b.build();
        } catch (InvalidSettingException e) {
            throw e.renamed(VARIABLES);
        }
    }

    /**
     * {@code mailroom support}: the support commands, their database defaults read from {@code env}
     * when a command first needs them (a bad value fails that command, not the others), their options'
     * help naming the variables.
     */
    static CommandLine cli(Map<String, String> env) {
        Map<String, String> copy = Map.copyOf(env);
        CommandLine cmd = SupportCli.commandLine(new SupportCli(() -> cliDatabase(copy),
                () -> WebhookConfig.erasureKey(new Settings(copy))));
        cmd.setResourceBundle(new CliHelp());
        return cmd;
    }

    /** The support commands' database defaults; the options trim what they take from here. */
    static CliDatabase cliDatabase(Map<String, String> env) {
        boolean pooled = DbTopology.pooled(env);
        return new CliDatabase(env.get(DB_URL), env.get(DB_USER), env.get(DB_PASSWORD), env.get(DbTopology.ENV_SCHEMA),
                DbTopology.timeouts(env), pooled, DbTopology.sessionSettings(env, pooled), DB_URL);
    }

    /** The support options' help, naming the variables behind their defaults. */
    static final class CliHelp extends ListResourceBundle {
        @Override
        protected Object[][] getContents() {
            return new Object[][]{
                    {"db-url", "JDBC URL of the database (default: $" + DB_URL + ")"},
                    {"db-user", "database user (default: $" + DB_USER + ", else from the URL)"},
                    {"db-password", "database password (default: $" + DB_PASSWORD + ", else from the URL)"},
                    {"schema", "the schema of Mailroom's tables (default: $" + DbTopology.ENV_SCHEMA + ", else mailroom)"}};
        }
    }

    private static String set(Map<String, String> env, String name) {
        String value = env.get(name);
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static int parseInt(String variable, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new InvalidSettingException(variable, variable + " must be a whole number");
        }
    }

    private static boolean parseBoolean(String variable, String value) {
        if (value == null || value.isBlank()) {
            return false;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no" -> false;
            default -> throw new InvalidSettingException(variable, variable + " must be true or false");
        };
    }
}
