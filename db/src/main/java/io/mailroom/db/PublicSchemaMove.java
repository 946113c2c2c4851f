package io.mailroom.db;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The upgrade from a Mailroom that kept its tables in {@code public} with Flyway's default history
 * table ({@code public.flyway_schema_history}, scripts V1 to V13, the example shop's V1, V5 and V8
 * among them) to Mailroom's own schema.
 *
 * <p>In one transaction: Mailroom's tables (with every partition of {@code outbox_message}, the id
 * sequence and the trigger function) move into the schema by {@code ALTER ... SET SCHEMA}, which
 * keeps every row, index, constraint and default where it was; Mailroom's applied migrations are
 * copied into Mailroom's own history table, so Flyway then applies only what came after them; and
 * every row that Mailroom's old library wrote in {@code public.flyway_schema_history} is removed
 * from it (the table too, once empty), so a business's own Flyway finds its defaults free. The
 * shop's tables ({@code orders} and the rest) stay in {@code public}: they are the shop's, and its
 * own migrations adopt them. A crash anywhere rolls it all back; a second dispatcher starting at the
 * same time waits on the advisory lock and then finds the move done.
 */
final class PublicSchemaMove {

    private static final Logger log = LoggerFactory.getLogger(PublicSchemaMove.class);

    /** Scripts of the queue in the old history; their names and contents are those of today's V2 to V13. */
    static final Set<String> MAILROOM_SCRIPTS = Set.of("V2__outbox.sql", "V3__idempotency_and_audit.sql",
            "V4__idempotency_repeats.sql", "V6__closed_status.sql", "V7__email_rendering.sql",
            "V9__delivery_events_and_suppression.sql", "V10__claim_incarnation.sql", "V11__dispatcher_registry.sql",
            "V12__delivery_event_counts.sql", "V13__waiting_for.sql");
    /** The example shop's scripts that the old library applied with its own. */
    static final Set<String> SHOP_SCRIPTS = Set.of("V1__orders.sql", "V5__order_request_keys.sql",
            "V8__order_locale_shipment_cancellation.sql");
    /** Every table the old scripts V2 to V13 created (partitions of outbox_message apart). */
    static final List<String> TABLES = List.of("outbox_message", "outbox_effect", "outbox_attempt", "outbox_control",
            "idempotency_record", "audit_log", "email_rendering", "delivery_event", "suppression", "soft_bounce_run",
            "outbox_dispatcher", "delivery_event_count");
    /** Any fixed number: serialises two processes that would move the same database at once. */
    private static final long LOCK = 0x6d61696c726f6f6dL;

    private PublicSchemaMove() {
    }

    static void moveIfNeeded(DataSource dataSource, MailroomSchema schema) {
        try (Connection c = dataSource.getConnection()) {
            if (!looksOld(c, schema)) {
                return;
            }
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                try (Statement st = c.createStatement()) {
                    st.execute("SELECT pg_advisory_xact_lock(" + LOCK + ")");
                }
                if (looksOld(c, schema)) { // re-checked under the lock: another process may have moved it
                    move(c, schema);
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Could not move Mailroom's tables from public into schema " + schema
                    + " (SQLSTATE " + e.getSQLState() + "): " + e.getMessage(), e);
        }
    }

    /** An old layout: Mailroom's queue in public, recorded in public's Flyway history, and no history of our own yet. */
    private static boolean looksOld(Connection c, MailroomSchema schema) throws SQLException {
        return relation(c, schema.name(), Schema.HISTORY_TABLE) == null
                && relation(c, "public", "outbox_message") != null
                && relation(c, "public", "flyway_schema_history") != null
                && !oldMailroomRows(c).isEmpty();
    }

    private static List<String> oldMailroomRows(Connection c) throws SQLException {
        List<String> scripts = new ArrayList<>();
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT script FROM public.flyway_schema_history WHERE success")) {
            while (rs.next()) {
                if (MAILROOM_SCRIPTS.contains(rs.getString(1))) {
                    scripts.add(rs.getString(1));
                }
            }
        }
        return scripts;
    }

    private static void move(Connection c, MailroomSchema schema) throws SQLException {
        String s = schema.name();
        List<String> partitions = new ArrayList<>();
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                     + " WHERE i.inhparent = 'public.outbox_message'::regclass ORDER BY 1")) {
            while (rs.next()) {
                partitions.add(rs.getString(1));
            }
        }
        int moved = 0;
        try (Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA IF NOT EXISTS " + s);
            for (String table : TABLES) {
                if (relation(c, "public", table) != null) {
                    st.execute("ALTER TABLE public." + table + " SET SCHEMA " + s);
                    moved++;
                }
            }
            for (String partition : partitions) {
                st.execute("ALTER TABLE public." + quote(partition) + " SET SCHEMA " + s);
            }
            if (relation(c, "public", "outbox_message_id_seq") != null) {
                st.execute("ALTER SEQUENCE public.outbox_message_id_seq SET SCHEMA " + s);
            }
            if (exists(c, "SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                    + " WHERE n.nspname = 'public' AND p.proname = 'delivery_event_count_trigger'")) {
                st.execute("ALTER FUNCTION public.delivery_event_count_trigger() SET SCHEMA " + s);
            }
            String history = s + "." + Schema.HISTORY_TABLE;
            st.execute("CREATE TABLE " + history + " (LIKE public.flyway_schema_history INCLUDING ALL)");
            try (PreparedStatement copy = c.prepareStatement("INSERT INTO " + history
                    + " SELECT * FROM public.flyway_schema_history WHERE script = ANY (?)")) {
                copy.setArray(1, c.createArrayOf("varchar", MAILROOM_SCRIPTS.toArray()));
                copy.executeUpdate();
            }
            try (PreparedStatement forget = c.prepareStatement(
                    "DELETE FROM public.flyway_schema_history WHERE script = ANY (?)")) {
                List<String> ours = new ArrayList<>(MAILROOM_SCRIPTS);
                ours.addAll(SHOP_SCRIPTS);
                forget.setArray(1, c.createArrayOf("varchar", ours.toArray()));
                forget.executeUpdate();
            }
            boolean emptied = !exists(c, "SELECT 1 FROM public.flyway_schema_history WHERE version IS NOT NULL");
            if (emptied) {
                st.execute("DROP TABLE public.flyway_schema_history");
            }
            log.info("Moved Mailroom's {} tables and {} outbox partitions from public into schema {}, with their history;"
                    + " {}", moved, partitions.size(), s, emptied
                    ? "public.flyway_schema_history held nothing else and was dropped"
                    : "public.flyway_schema_history keeps its other rows");
        }
    }

    private static String relation(Connection c, String schema, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)::text")) {
            ps.setString(1, schema + "." + quote(name));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static boolean exists(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return rs.next();
        }
    }

    private static String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }
}
