package io.mailroom.db.sql;

import io.mailroom.db.MailroomSchema;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/**
 * A statement of the dispatcher's hot path (claim, completion, heartbeat, the batch reservation and
 * outcomes of the idempotency store, the renderings), held as finished SQL text and run on the
 * transaction's own JDBC connection.
 *
 * <p>Why not through jOOQ each time: a profile of a drain showed half of the producer's CPU in
 * building and rendering the same claim again for every batch, and a fifth of the completer's in
 * rendering its templates, on a 2-core machine where every client millisecond is taken from the
 * database. The texts are still written once, by jOOQ on the generated classes (the claim) or as
 * templates here; only the per-batch work is plain JDBC: bind, execute, read columns by index.
 *
 * <p>A template writes {@code {now}} where the statement needs the current time: it becomes the
 * database's {@code now()}, or, with an injected test clock, a parameter bound to that clock's
 * instant at every execution. Other parameters are {@code ?}, bound in order. It writes
 * {@code {schema}.table} for Mailroom's tables: the schema is the one the executing context reaches
 * ({@link MailroomSchema#of}), so the same statement serves a service configured for another schema.
 */
public final class HotSql {

    private static final String NOW = "{now}";

    /** Reads one row of a result. */
    @FunctionalInterface
    public interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /** The text for the default schema; {@link #sqlFor} renders (and keeps) the text for another. */
    private final String sql;
    private volatile Rendered other;
    /** For each {@code ?} of {@link #sql}: true where it stands for "now", false for the next argument. */
    private final boolean[] nowSlots;
    /** How many arguments a caller passes: the placeholders that are not "now". */
    private final int argumentCount;
    private final SqlClock clock;

    private record Rendered(MailroomSchema schema, String sql) {
    }

    private HotSql(String sql, boolean[] nowSlots, SqlClock clock) {
        this.sql = sql;
        this.nowSlots = nowSlots;
        int arguments = 0;
        for (boolean now : nowSlots) {
            arguments += now ? 0 : 1;
        }
        this.argumentCount = arguments;
        this.clock = clock;
    }

    /** A template with {@code {now}} and {@code ?} placeholders, for {@code clock}. */
    public static HotSql of(String template, SqlClock clock) {
        StringBuilder sql = new StringBuilder(template.length());
        List<Boolean> slots = new ArrayList<>();
        for (int i = 0; i < template.length(); i++) {
            char c = template.charAt(i);
            if (template.startsWith(NOW, i)) {
                if (clock.isDatabaseTime()) {
                    sql.append("now()");
                } else {
                    sql.append("cast(? as timestamptz)");
                    slots.add(true);
                }
                i += NOW.length() - 1;
            } else {
                if (c == '?') {
                    slots.add(false);
                }
                sql.append(c);
            }
        }
        boolean[] nowSlots = new boolean[slots.size()];
        for (int i = 0; i < nowSlots.length; i++) {
            nowSlots[i] = slots.get(i);
        }
        return new HotSql(sql.toString(), nowSlots, clock);
    }

    /** The SQL text as sent to the default schema. */
    public String sql() {
        return MailroomSchema.DEFAULT.sql(sql);
    }

    /** The SQL text as sent over {@code tx}. */
    public String sqlFor(DSLContext tx) {
        MailroomSchema schema = MailroomSchema.of(tx);
        if (schema.isDefault()) {
            return sql();
        }
        Rendered r = other;
        if (r == null || !r.schema().equals(schema)) {
            r = new Rendered(schema, schema.sql(sql));
            other = r;
        }
        return r.sql();
    }

    public <T> List<T> query(DSLContext tx, RowReader<T> reader, Object... args) {
        return query(tx, sqlFor(tx), bindings(args), reader);
    }

    public int execute(DSLContext tx, Object... args) {
        return execute(tx, sqlFor(tx), bindings(args));
    }

    private Object[] bindings(Object[] args) {
        if (args.length != argumentCount) {
            throw new IllegalArgumentException("statement takes " + argumentCount + " arguments, got " + args.length);
        }
        Object[] values = new Object[nowSlots.length];
        Instant now = clock.isDatabaseTime() ? null : clock.instant();
        int next = 0;
        for (int i = 0; i < values.length; i++) {
            values[i] = nowSlots[i] ? now : args[next++];
        }
        return values;
    }

    // ------------------------------------------------------------------ plain execution of any text

    /** Runs {@code sql} with {@code values} bound in order and reads every row with {@code reader}. */
    public static <T> List<T> query(DSLContext tx, String sql, Object[] values, RowReader<T> reader) {
        return tx.connectionResult(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                bind(c, ps, values);
                try (ResultSet rs = ps.executeQuery()) {
                    List<T> rows = new ArrayList<>();
                    while (rs.next()) {
                        rows.add(reader.read(rs));
                    }
                    return rows;
                }
            } catch (SQLException e) {
                throw failed(sql, e);
            }
        });
    }

    public static int execute(DSLContext tx, String sql, Object[] values) {
        return tx.connectionResult(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                bind(c, ps, values);
                return ps.executeUpdate();
            } catch (SQLException e) {
                throw failed(sql, e);
            }
        });
    }

    /** A timestamptz column as an instant (null stays null). */
    public static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    private static void bind(Connection c, PreparedStatement ps, Object[] values) throws SQLException {
        for (int i = 0; i < values.length; i++) {
            int p = i + 1;
            switch (values[i]) {
                case null -> ps.setObject(p, null);
                case String s -> ps.setString(p, s);
                case Long l -> ps.setLong(p, l);
                case Integer n -> ps.setInt(p, n);
                case Double d -> ps.setDouble(p, d);
                case Boolean b -> ps.setBoolean(p, b);
                case Instant t -> ps.setObject(p, t.atOffset(ZoneOffset.UTC));
                case OffsetDateTime t -> ps.setObject(p, t);
                case String[] a -> ps.setArray(p, c.createArrayOf("varchar", a));
                case Long[] a -> ps.setArray(p, c.createArrayOf("bigint", a));
                case Integer[] a -> ps.setArray(p, c.createArrayOf("integer", a));
                default -> throw new IllegalArgumentException("cannot bind parameter " + p + " of type "
                        + values[i].getClass().getName());
            }
        }
    }

    /** The same exception type jOOQ throws, so callers classify failures (by SQLSTATE) as before. */
    private static DataAccessException failed(String sql, SQLException e) {
        return new DataAccessException("SQL [" + abbreviate(sql) + "]; " + e.getMessage(), e);
    }

    private static String abbreviate(String sql) {
        return sql.length() <= 120 ? sql : sql.substring(0, 117) + "...";
    }
}
