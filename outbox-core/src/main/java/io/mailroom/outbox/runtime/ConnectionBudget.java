package io.mailroom.outbox.runtime;

import io.mailroom.outbox.OutboxException;
import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Whether the PostgreSQL server has room for the sessions a service is about to open. A service
 * that opens more than the server's free slots does not fail at once: its pool keeps retrying,
 * and every other client of the server (other dispatchers, the order service, psql) gets "sorry,
 * too many clients already" (SQLSTATE 53300). Checked once at start, on one connection, before the
 * pools are filled.
 *
 * <p>The service's own sessions are told apart by their {@code application_name} (set on all its
 * pools): they are neither free nor someone else's.
 */
public final class ConnectionBudget {

    /**
     * Other clients: client backends, and rows whose type the role may not see (another role's
     * sessions, for a role without {@code pg_read_all_stats}; auxiliary processes also show so,
     * which makes the count err on the safe side). {@code reserved_connections} exists from
     * PostgreSQL 16 on.
     */
    private static final String SLOTS = """
            SELECT current_setting('max_connections')::int,
                   current_setting('superuser_reserved_connections')::int,
                   coalesce(current_setting('reserved_connections', true), '0')::int,
                   (SELECT count(*)::int FROM pg_stat_activity
                     WHERE (backend_type = 'client backend' OR backend_type IS NULL)
                       AND application_name IS DISTINCT FROM ?)""";

    /**
     * What the server reported.
     *
     * @param othersInUse sessions open now that are not this service's
     */
    public record Slots(int maxConnections, int superuserReserved, int reserved, int othersInUse) {

        /** Slots an ordinary role can still take. */
        public int free() {
            return maxConnections - superuserReserved - reserved - othersInUse;
        }

        @Override
        public String toString() {
            return free() + " free connection slots (max_connections " + maxConnections
                    + " - superuser_reserved_connections " + superuserReserved
                    + (reserved > 0 ? " - reserved_connections " + reserved : "")
                    + " - " + othersInUse + " sessions of other clients in pg_stat_activity)";
        }
    }

    /** Refused at start: the server has fewer free slots than the service's pools ask for. */
    public static final class Exhausted extends IllegalStateException {
        private final transient Slots slots;
        private final int wanted;

        Exhausted(String message, Slots slots, int wanted) {
            super(message);
            this.slots = slots;
            this.wanted = wanted;
        }

        public Slots slots() {
            return slots;
        }

        public int wanted() {
            return wanted;
        }
    }

    private ConnectionBudget() {
    }

    /** The server's slots as seen from {@code connection}, not counting sessions named {@code applicationName}. */
    public static Slots measure(Connection connection, String applicationName) throws SQLException {
        try (PreparedStatement st = connection.prepareStatement(SLOTS)) {
            st.setString(1, applicationName);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return new Slots(rs.getInt(1), rs.getInt(2), rs.getInt(3), rs.getInt(4));
            }
        }
    }

    /**
     * Throws {@link Exhausted}, naming the numbers, when the server has fewer free slots than
     * {@code wanted}; {@code who} says whose pools ({@code "dispatcher d-1 (pool 9 + reservations 4)"})
     * and {@code remedy} what to change.
     */
    public static Slots require(DataSource dataSource, String applicationName, int wanted, String who, String remedy) {
        Slots slots;
        try (Connection c = dataSource.getConnection()) {
            slots = measure(c, applicationName);
        } catch (SQLException e) {
            throw new OutboxException("could not read the server's connection slots (SQLSTATE " + e.getSQLState() + ")", e);
        }
        if (slots.free() < wanted) {
            throw new Exhausted("PostgreSQL has " + slots + ", but " + who + " needs " + wanted + "; " + remedy,
                    slots, wanted);
        }
        return slots;
    }
}
