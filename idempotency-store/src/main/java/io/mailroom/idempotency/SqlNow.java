package io.mailroom.idempotency;

import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Clock;

/**
 * "Now" as the store writes it into SQL: the database's {@code now()} in production (one clock for
 * every host, and the same instant for every statement of a transaction), or an injected
 * {@link Clock}'s instant bound as a parameter, so tests drive time without sleeping.
 */
final class SqlNow {

    private static final Field<java.time.Instant> DB_NOW = DSL.field(DSL.raw("now()"), SQLDataType.INSTANT);

    private final Clock clock;

    SqlNow(Clock clock) {
        this.clock = clock;
    }

    Field<java.time.Instant> now() {
        return clock == null ? DB_NOW : DSL.val(clock.instant(), SQLDataType.INSTANT);
    }

    @Override
    public String toString() {
        return clock == null ? "database now()" : clock.toString();
    }
}
