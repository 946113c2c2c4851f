package io.mailroom.orders;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.flywaydb.core.api.configuration.FluentConfiguration;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The example shop's own tables ({@code orders}, {@code order_line}, {@code order_request_key},
 * {@code order_shipment}, {@code order_cancellation}) and their migrations, as any business keeps
 * them beside Mailroom's: its scripts at {@value #MIGRATIONS}, its history in {@value #HISTORY_TABLE},
 * in the connection's default schema. Mailroom's library knows none of them.
 *
 * <p>A database that an earlier Mailroom migrated holds the shop's tables already (that library
 * applied the shop's scripts with its own, and now hands them over when it moves into its own
 * schema): the first migration here then records them as version {@value #ADOPTED_VERSION} (a
 * Flyway baseline) instead of creating them again.
 */
public final class ShopSchema {

    public static final String MIGRATIONS = "classpath:io/mailroom/orders/migration";
    public static final String HISTORY_TABLE = "shop_schema_history";
    /** The shop's tables as the old library's V1, V5 and V8 left them: the shop's V1 to V3. */
    static final String ADOPTED_VERSION = "3";

    private ShopSchema() {
    }

    public static MigrateResult migrate(DataSource dataSource) {
        FluentConfiguration flyway = Flyway.configure()
                .dataSource(dataSource)
                .locations(MIGRATIONS)
                .table(HISTORY_TABLE);
        if (adoptsExistingTables(dataSource)) {
            flyway.baselineOnMigrate(true).baselineVersion(ADOPTED_VERSION)
                    .baselineDescription("orders tables kept from the Mailroom library that created them");
        }
        return flyway.load().migrate();
    }

    /** The shop's tables are there but no history of the shop's own is. */
    private static boolean adoptsExistingTables(DataSource dataSource) {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT to_regclass('orders') IS NOT NULL AND to_regclass('"
                     + HISTORY_TABLE + "') IS NULL")) {
            rs.next();
            return rs.getBoolean(1);
        } catch (SQLException e) {
            throw new IllegalStateException("Could not read the shop's schema (SQLSTATE " + e.getSQLState() + ")", e);
        }
    }
}
