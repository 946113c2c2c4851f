package io.mailroom.db.sql;

import io.mailroom.testing.PostgresExtension;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Errors are classified by SQLSTATE and constraint name as the server reports them, never by message text. */
class SqlStatesTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void theFirstSqlExceptionInTheCauseChainDecides() {
        SQLException inner = new SQLException("lost", "08006");
        RuntimeException wrapped = new RuntimeException(new IllegalStateException(inner));
        assertThat(SqlStates.sqlException(wrapped)).containsSame(inner);
        assertThat(SqlStates.sqlState(wrapped)).isEqualTo("08006");
        assertThat(SqlStates.is(wrapped, "08006")).isTrue();
        assertThat(SqlStates.is(wrapped, SqlStates.QUERY_CANCELED)).isFalse();
        // text that looks like a state is not a state
        assertThat(SqlStates.sqlState(new IllegalStateException("23505"))).isNull();
        assertThat(SqlStates.sqlException(new RuntimeException())).isEmpty();
    }

    @Test
    void aCauseChainThatLoopsEnds() {
        Throwable selfCaused = new Throwable() {
            @Override
            public synchronized Throwable getCause() {
                return this;
            }
        };
        assertThat(SqlStates.sqlState(selfCaused)).isNull();
    }

    @Test
    void connectionLossIsClass08AndTheServerGoingAway() {
        for (String state : new String[]{"08000", "08006", "57P01", "57P02", "57P03", "25P03"}) {
            assertThat(SqlStates.isConnectionLoss(new SQLException("x", state))).as(state).isTrue();
        }
        for (String state : new String[]{"23505", "57014", "40001", "55P03"}) {
            assertThat(SqlStates.isConnectionLoss(new SQLException("x", state))).as(state).isFalse();
        }
        assertThat(SqlStates.isConnectionLoss(new SQLException("no state"))).isFalse();
        assertThat(SqlStates.isConnectionLoss(new RuntimeException("08006"))).isFalse();
    }

    @Test
    void theConstraintComesFromTheServersErrorFields() {
        PSQLException e = new PSQLException(new ServerErrorMessage("SERROR\0C23505\0Mduplicate key\0nsome_pkey\0"));
        assertThat(SqlStates.constraint(e)).contains("some_pkey");
        assertThat(SqlStates.isUniqueViolation(new RuntimeException(e), "some_pkey")).isTrue();
        assertThat(SqlStates.isUniqueViolation(e, "other_pkey")).isFalse();
        // a unique violation without server fields names no constraint
        assertThat(SqlStates.isUniqueViolation(new SQLException("dup", "23505"), "some_pkey")).isFalse();
        assertThat(SqlStates.constraint(new SQLException("dup", "23505"))).isEmpty();
    }

    @Test
    void aRealDuplicateKeyIsAUniqueViolationOfItsConstraint() {
        pg.dsl().execute("CREATE TABLE IF NOT EXISTS sql_states_probe (id int CONSTRAINT sql_states_probe_pkey PRIMARY KEY)");
        pg.dsl().execute("INSERT INTO sql_states_probe VALUES (1) ON CONFLICT DO NOTHING");
        DataAccessException duplicate = assertThrows(DataAccessException.class,
                () -> pg.dsl().execute("INSERT INTO sql_states_probe VALUES (1)"));
        assertThat(SqlStates.sqlState(duplicate)).isEqualTo(SqlStates.UNIQUE_VIOLATION);
        assertThat(SqlStates.isUniqueViolation(duplicate, "sql_states_probe_pkey")).isTrue();
        assertThat(SqlStates.isUniqueViolation(duplicate, "outbox_message_pkey")).isFalse();

        DataAccessException notJson = assertThrows(DataAccessException.class,
                () -> pg.dsl().execute("SELECT 'not json'::jsonb"));
        assertThat(SqlStates.is(notJson, SqlStates.INVALID_TEXT_REPRESENTATION)).isTrue();
    }
}
