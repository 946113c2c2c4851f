package io.mailroom.db.sql;

import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The checks before SQL agree with what the server refuses, and what they let through is stored as given. */
class PgValuesTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Field<Instant> AT = DSL.field(DSL.name("at"), SQLDataType.INSTANT);
    private static final Field<String> TEXT = DSL.field(DSL.name("text"), SQLDataType.CLOB);

    @Test
    void whatTheChecksRefuseTheServerRefusesAsADataException() {
        DSLContext dsl = pg.dsl();
        dsl.execute("CREATE TABLE IF NOT EXISTS pg_values_probe (at timestamptz, text text)");
        String nul = "a\u0000b";
        assertThat(PgValues.textProblem(nul)).hasValueSatisfying(p -> assertThat(p).contains("U+0000").contains("index 1"));
        DataAccessException text = assertThrows(DataAccessException.class,
                () -> dsl.insertInto(DSL.table("pg_values_probe")).columns(TEXT).values(nul).execute());
        assertThat(SqlStates.isDataException(text)).as(SqlStates.sqlState(text)).isTrue();

        Instant far = Instant.parse("+300000-01-01T00:00:00Z");
        assertThat(PgValues.timeProblem(far)).hasValueSatisfying(p -> assertThat(p).contains("0001 to 9999"));
        DataAccessException time = assertThrows(DataAccessException.class,
                () -> dsl.insertInto(DSL.table("pg_values_probe")).columns(AT).values(far).execute());
        assertThat(SqlStates.isDataException(time)).as(SqlStates.sqlState(time)).isTrue();
        assertThat(SqlStates.isConnectionLoss(time)).isFalse();
    }

    @Test
    void theBoundsThemselvesAreStoredAndReadBackExactly() {
        DSLContext dsl = pg.dsl();
        dsl.execute("CREATE TABLE IF NOT EXISTS pg_values_bounds (at timestamptz)");
        for (Instant bound : new Instant[] {PgValues.MIN_TIME, PgValues.MAX_TIME}) {
            assertThat(PgValues.timeProblem(bound)).isEmpty();
            assertThat(dsl.insertInto(DSL.table("pg_values_bounds")).columns(AT).values(bound).returning(AT).fetchOne(AT))
                    .isEqualTo(bound);
        }
        assertThat(PgValues.timeProblem(PgValues.MIN_TIME.minusNanos(1000))).isPresent();
        assertThat(PgValues.timeProblem(PgValues.MAX_TIME.plusNanos(1000))).isPresent();
        assertThat(PgValues.textProblem("plain")).isEmpty();
        assertThat(PgValues.textProblem(null)).isEmpty();
    }
}
