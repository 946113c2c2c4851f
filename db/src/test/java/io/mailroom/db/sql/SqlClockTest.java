package io.mailroom.db.sql;

import io.mailroom.testing.PostgresExtension;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/** "Now" in SQL: the database's, or an injected clock's bound as a parameter. */
class SqlClockTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant T0 = Instant.parse("2030-01-01T12:00:00.123Z");

    @Test
    void anInjectedClockIsBoundAsAValue() {
        SqlClock clock = SqlClock.of(Clock.fixed(T0, ZoneOffset.UTC));
        assertThat(clock.isDatabaseTime()).isFalse();
        assertThat(pg.dsl().select(clock.now()).fetchSingle().value1()).isEqualTo(T0);
        assertThat(pg.dsl().select(clock.plus(Duration.ofMillis(1500))).fetchSingle().value1())
                .isEqualTo(T0.plusMillis(1500));
        assertThat(clock.instant()).isEqualTo(T0);
    }

    @Test
    void withoutAClockItIsTheDatabasesNowAndTheSameWithinATransaction() {
        assertThat(SqlClock.of(null)).isSameAs(SqlClock.database());
        SqlClock db = SqlClock.database();
        assertThat(db.isDatabaseTime()).isTrue();
        assertThat(db.toString()).isEqualTo("database now()");
        pg.dsl().transaction(cfg -> {
            Instant serverNow = DSL.using(cfg).select(DSL.field("now()", Instant.class)).fetchSingle().value1();
            assertThat(DSL.using(cfg).select(db.now()).fetchSingle().value1()).isEqualTo(serverNow);
            assertThat(DSL.using(cfg).select(db.plus(Duration.ofMillis(2500))).fetchSingle().value1())
                    .isEqualTo(serverNow.plusMillis(2500));
        });
    }
}
