package io.mailroom.db.sql;

import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The notion of "now" used in SQL. In production it is the database's {@code now()} (one clock for
 * every dispatcher host, so leases are compared against the same time they were set with). Tests
 * inject a {@link Clock}; its instant is then bound as a parameter, so backoff and lease expiry are
 * driven without sleeping.
 */
public final class SqlClock {

    private static final Field<Instant> DB_NOW = DSL.field(DSL.raw("now()"), SQLDataType.INSTANT);
    private static final SqlClock DATABASE = new SqlClock(null);

    private final Clock clock;

    private SqlClock(Clock clock) {
        this.clock = clock;
    }

    /** Database time. */
    public static SqlClock database() {
        return DATABASE;
    }

    /** {@code clock}'s time, or database time when {@code clock} is null. */
    public static SqlClock of(Clock clock) {
        return clock == null ? DATABASE : new SqlClock(clock);
    }

    public boolean isDatabaseTime() {
        return clock == null;
    }

    /** "now" as an SQL expression. */
    public Field<Instant> now() {
        return clock == null ? DB_NOW : DSL.val(clock.instant(), SQLDataType.INSTANT);
    }

    /** "now + delay" as an SQL expression, to the millisecond. */
    public Field<Instant> plus(Duration delay) {
        if (clock != null) {
            return DSL.val(clock.instant().plus(delay), SQLDataType.INSTANT);
        }
        return DSL.field("{0} + make_interval(secs => {1})", SQLDataType.INSTANT,
                DB_NOW, DSL.val(delay.toMillis() / 1000.0));
    }

    /** Java-side now: the injected clock's, else the JVM's (for timers and metrics, never for leases). */
    public Instant instant() {
        return clock == null ? Instant.now() : clock.instant();
    }

    @Override
    public String toString() {
        return clock == null ? "database now()" : clock.toString();
    }
}
