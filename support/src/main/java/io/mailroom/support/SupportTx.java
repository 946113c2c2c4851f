package io.mailroom.support;

import io.mailroom.db.MailroomSchema;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.function.Function;

/**
 * The support surfaces' two kinds of transaction: a read runs READ ONLY at REPEATABLE READ, so a
 * page shows one consistent moment; a write runs at the default level. Both carry a statement
 * timeout set with {@code SET LOCAL}, so it holds behind a transaction-mode pooler too.
 */
final class SupportTx {

    private final DSLContext dsl;
    private final long statementTimeoutMillis;

    SupportTx(DataSource dataSource, Duration statementTimeout) {
        this.dsl = MailroomSchema.of(dataSource).dsl(dataSource);
        this.statementTimeoutMillis = statementTimeout.toMillis();
    }

    <T> T read(Function<DSLContext, T> work) {
        return read(work, Duration.ofMillis(statementTimeoutMillis));
    }

    /** A read whose statements may each take up to {@code statementTimeout} (a bulk action's count of a broad filter). */
    <T> T read(Function<DSLContext, T> work, Duration statementTimeout) {
        return dsl.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
            tx.execute("SET LOCAL statement_timeout = " + statementTimeout.toMillis());
            return work.apply(tx);
        });
    }

    <T> T write(Function<DSLContext, T> work) {
        return write(work, Duration.ofMillis(statementTimeoutMillis));
    }

    /** A write whose statements may each take up to {@code statementTimeout} (an erasure's scan). */
    <T> T write(Function<DSLContext, T> work, Duration statementTimeout) {
        return dsl.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            tx.execute("SET LOCAL statement_timeout = " + statementTimeout.toMillis());
            return work.apply(tx);
        });
    }
}
