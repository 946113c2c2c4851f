package io.mailroom.email.service;

import io.mailroom.db.MailroomSchema;
import io.mailroom.outbox.DbPooler;
import io.mailroom.outbox.DbTimeouts;
import io.mailroom.outbox.Durations;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.SessionSettings;

import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * How the service reaches PostgreSQL: directly, or through a transaction-mode pooler (PgBouncer
 * {@code pool_mode = transaction}), and which direct URLs carry what a pooled "session" cannot.
 *
 * @param pooler          {@code none} or {@code pgbouncer} ({@code MAILROOM_DB_POOLER}); behind
 *                        pgbouncer the pools use {@code prepareThreshold=0}, since PgBouncer before 1.21
 *                        does not carry pgjdbc's named server-side statements from one server session to the next
 * @param sessionSettings where the dispatcher's timeouts and isolation are set ({@code MAILROOM_DB_SESSION_SETTINGS}:
 *                        {@code session}, the default directly; {@code transaction}, the default behind a pooler;
 *                        {@code server}: set on the role, nothing per transaction)
 * @param listenUrl       a direct URL for the one LISTEN session ({@code MAILROOM_LISTEN_DB_URL}); null: the
 *                        pool's sessions directly, polling behind a pooler
 * @param migrateUrl      a direct URL for Flyway ({@code MAILROOM_MIGRATE_DB_URL}); Flyway holds a session-level
 *                        advisory lock across its transactions, which a transaction-mode pooler cannot keep
 * @param timeouts        how long every pool and session waits on the network ({@code MAILROOM_DB_*_TIMEOUT},
 *                        {@code MAILROOM_DB_KEEPALIVE}, {@code MAILROOM_DB_MAX_LIFETIME}: {@link #timeouts(Map)})
 * @param schema          the schema of Mailroom's tables ({@code MAILROOM_SCHEMA}, default {@code mailroom}); every
 *                        pool the service opens is bound to it ({@link MailroomSchema#bind})
 */
public record DbTopology(String pooler, SessionSettings sessionSettings, String listenUrl, String migrateUrl,
                         DbTimeouts timeouts, MailroomSchema schema) {

    public DbTopology {
        java.util.Objects.requireNonNull(schema, "schema");
    }

    /** Direct ({@code none}) or through a transaction-mode pooler ({@code pgbouncer}). */
    static final String ENV_POOLER = "MAILROOM_DB_POOLER";
    /** Where session settings are made: {@code session}, {@code transaction} or {@code server}. */
    static final String ENV_SESSION_SETTINGS = "MAILROOM_DB_SESSION_SETTINGS";

    /** The schema of Mailroom's tables. */
    static final String ENV_SCHEMA = "MAILROOM_SCHEMA";

    static final String ENV_SOCKET_TIMEOUT = "MAILROOM_DB_SOCKET_TIMEOUT";

    /** {@link DbTimeouts}' names of its settings, and the variables the service reads them from. */
    private static final Map<String, String> TIMEOUT_VARIABLES = Map.of(
            DbTimeouts.SETTING_CONNECT, "MAILROOM_DB_CONNECT_TIMEOUT",
            DbTimeouts.SETTING_LOGIN, "MAILROOM_DB_LOGIN_TIMEOUT",
            DbTimeouts.SETTING_SOCKET, ENV_SOCKET_TIMEOUT,
            DbTimeouts.SETTING_ACQUIRE, "MAILROOM_DB_ACQUIRE_TIMEOUT",
            DbTimeouts.SETTING_KEEPALIVE, "MAILROOM_DB_KEEPALIVE",
            DbTimeouts.SETTING_MAX_LIFETIME, "MAILROOM_DB_MAX_LIFETIME",
            DbTimeouts.SETTING_MIGRATION, "MAILROOM_DB_MIGRATION_SOCKET_TIMEOUT",
            DbTimeouts.SETTING_URL, "MAILROOM_DB_URL");

    public static final DbTopology DIRECT = new DbTopology("none", SessionSettings.SESSION, null, null, DbTimeouts.DEFAULTS,
            MailroomSchema.DEFAULT);

    /** The same with other network timeouts. */
    public DbTopology withTimeouts(DbTimeouts newTimeouts) {
        return new DbTopology(pooler, sessionSettings, listenUrl, migrateUrl, newTimeouts, schema);
    }

    /** Whether the pools' sessions come through a transaction-mode pooler. */
    public boolean pooled() {
        return !"none".equals(pooler);
    }

    static DbTopology fromEnv(Map<String, String> env, boolean migrate) {
        boolean pooled = pooled(env);
        String pooler = pooled ? "pgbouncer" : "none";
        SessionSettings settings = sessionSettings(env, pooled);
        String listenUrl = url(env, "MAILROOM_LISTEN_DB_URL");
        String migrateUrl = url(env, "MAILROOM_MIGRATE_DB_URL");
        if (pooled && migrate && migrateUrl == null) {
            throw new InvalidSettingException("MAILROOM_MIGRATE_DB_URL", "behind MAILROOM_DB_POOLER=pgbouncer, migrations"
                    + " need a direct URL (MAILROOM_MIGRATE_DB_URL): Flyway's session-level lock cannot live in a"
                    + " transaction-mode pooler; or set MAILROOM_MIGRATE=false and migrate elsewhere");
        }
        MailroomSchema schema;
        try {
            schema = MailroomSchema.named(env.get(ENV_SCHEMA));
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException(ENV_SCHEMA, ENV_SCHEMA + ": " + e.getMessage());
        }
        return new DbTopology(pooler, settings, listenUrl, migrateUrl, timeouts(env), schema);
    }

    /**
     * The network timeouts of every pool and session from {@code MAILROOM_DB_CONNECT_TIMEOUT},
     * {@code _LOGIN_TIMEOUT}, {@code _SOCKET_TIMEOUT}, {@code _ACQUIRE_TIMEOUT}, {@code _KEEPALIVE},
     * {@code _MAX_LIFETIME} and {@code _MIGRATION_SOCKET_TIMEOUT}; unset or blank: the default.
     */
    static DbTimeouts timeouts(Map<String, String> env) {
        return timeoutChecks(() -> DbTimeouts.of(setting -> {
            String variable = TIMEOUT_VARIABLES.get(setting);
            String value = trimmed(env.get(variable));
            return value == null ? null : Durations.parse(variable, value);
        }));
    }

    /** What {@link DbTimeouts} works out, a refusal naming the variable instead of its setting. */
    static <T> T timeoutChecks(Supplier<T> work) {
        try {
            return work.get();
        } catch (InvalidSettingException e) {
            throw e.renamed(TIMEOUT_VARIABLES);
        }
    }

    /** {@code MAILROOM_DB_POOLER}: whether the URL goes through a transaction-mode pooler. */
    static boolean pooled(Map<String, String> env) {
        return DbPooler.pooled(ENV_POOLER, env.get(ENV_POOLER));
    }

    /** {@code MAILROOM_DB_SESSION_SETTINGS}, its default following {@code pooled}. */
    static SessionSettings sessionSettings(Map<String, String> env, boolean pooled) {
        return DbPooler.sessionSettings(ENV_POOLER, ENV_SESSION_SETTINGS, pooled, env.get(ENV_SESSION_SETTINGS));
    }

    private static String url(Map<String, String> env, String name) {
        String v = trimmed(env.get(name));
        if (v != null && !v.startsWith("jdbc:postgresql://")) {
            throw new InvalidSettingException(name, name + " must be a jdbc:postgresql:// URL");
        }
        return v;
    }

    private static String trimmed(String v) {
        return v == null || v.isBlank() ? null : v.trim();
    }

    @Override
    public String toString() {
        return "pooler=" + pooler + ", sessionSettings=" + sessionSettings.name().toLowerCase(Locale.ROOT)
                + ", listenDb=" + (listenUrl == null ? "pool" : ServiceConfig.maskUrl(listenUrl))
                + ", migrateDb=" + (migrateUrl == null ? "pool" : ServiceConfig.maskUrl(migrateUrl)) + ", schema=" + schema
                + ", timeouts[" + timeouts + "]";
    }
}
