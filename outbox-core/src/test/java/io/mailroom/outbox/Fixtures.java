package io.mailroom.outbox;

import org.jooq.DSLContext;
import org.jooq.Record;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/** Row factories and readers for outbox tests. */
public final class Fixtures {

    public static final String TOPIC = "test.topic";

    private Fixtures() {
    }

    /** A fresh autocommit session of {@code pg}'s database, listening on the outbox's wake-up channel. */
    public static java.sql.Connection listen(io.mailroom.testing.PostgresExtension pg) throws java.sql.SQLException {
        java.sql.Connection c = pg.newConnection();
        c.setAutoCommit(true);
        try (java.sql.Statement st = c.createStatement()) {
            st.execute("LISTEN " + OutboxEnqueuer.CHANNEL);
        }
        return c;
    }

    public static NewMessage message(String key) {
        return NewMessage.of(TOPIC, "order", key, key, "{\"key\":\"" + key + "\"}");
    }

    /** Enqueues {@code n} messages {@code prefix-1..n} in one committed transaction. */
    public static List<EnqueuedMessage> enqueue(DSLContext dsl, Clock clock, String prefix, int n) {
        OutboxEnqueuer enqueuer = new OutboxEnqueuer(clock, false);
        List<NewMessage> messages = new ArrayList<>(n);
        for (int i = 1; i <= n; i++) {
            messages.add(message(prefix + "-" + i));
        }
        List<EnqueuedMessage> out = new ArrayList<>(n);
        for (int from = 0; from < n; from += 1000) {
            List<NewMessage> chunk = messages.subList(from, Math.min(n, from + 1000));
            out.addAll(dsl.transactionResult(cfg -> enqueuer.enqueueAll(cfg.dsl(), chunk)));
        }
        return out;
    }

    public static EnqueuedMessage enqueueOne(DSLContext dsl, Clock clock, NewMessage message) {
        OutboxEnqueuer enqueuer = new OutboxEnqueuer(clock, false);
        return dsl.transactionResult(cfg -> enqueuer.enqueue(cfg.dsl(), message));
    }

    public static Record row(DSLContext dsl, long id) {
        return dsl.selectFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.ID.eq(id)).fetchSingle();
    }

    public static String status(DSLContext dsl, long id) {
        return row(dsl, id).get(OUTBOX_MESSAGE.STATUS);
    }

    public static int countByStatus(DSLContext dsl, String status) {
        return dsl.fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq(status));
    }
}
