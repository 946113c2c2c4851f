package io.mailroom.orders;

import io.mailroom.outbox.DbPooler;

import java.util.Map;

/**
 * Whether the order service reaches PostgreSQL through a transaction-mode pooler (PgBouncer
 * {@code pool_mode = transaction}): {@code MAILROOM_DB_POOLER=pgbouncer} gives the pool
 * {@code prepareThreshold=0} (PgBouncer before 1.21 does not carry pgjdbc's named statements from one
 * server session to the next), leaves the connection budget to the pooler, and runs Flyway over
 * {@code MAILROOM_MIGRATE_DB_URL}, a direct URL (its session-level lock cannot live in such a pooler).
 *
 * @param pooled     through a transaction-mode pooler
 * @param migrateUrl direct JDBC URL for the migrations, or null (the pool's URL)
 */
public record OrderPooler(boolean pooled, String migrateUrl) {

    public static final String ENV_POOLER = "MAILROOM_DB_POOLER";
    public static final String ENV_MIGRATE_URL = "MAILROOM_MIGRATE_DB_URL";
    public static final OrderPooler DIRECT = new OrderPooler(false, null);

    /** Reads the two variables; a bad value throws {@link IllegalArgumentException} naming the variable. */
    public static OrderPooler fromEnvironment(Map<String, String> env, boolean migrate) {
        boolean pooled = DbPooler.pooled(ENV_POOLER, env.get(ENV_POOLER));
        String url = env.get(ENV_MIGRATE_URL);
        url = url == null || url.isBlank() ? null : url.trim();
        if (url != null && !url.startsWith("jdbc:postgresql://")) {
            throw new IllegalArgumentException(ENV_MIGRATE_URL + " must be a jdbc:postgresql:// URL");
        }
        if (pooled && migrate && url == null) {
            throw new IllegalArgumentException("behind " + ENV_POOLER + "=pgbouncer, migrations need a direct URL ("
                    + ENV_MIGRATE_URL + "), or MAILROOM_MIGRATE=false");
        }
        return new OrderPooler(pooled, url);
    }

    @Override
    public String toString() {
        return "pooler=" + (pooled ? "pgbouncer" : "none") + (migrateUrl == null ? "" : ", migrateDb="
                + OrderServiceConfig.maskUrl(migrateUrl));
    }
}
