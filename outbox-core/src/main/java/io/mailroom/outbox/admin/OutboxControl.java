package io.mailroom.outbox.admin;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.ControlStore;
import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.Set;

/**
 * The cluster-wide pause switches in {@code outbox_control}. Every dispatcher reads them every
 * {@link DispatcherConfig#controlPollInterval()}: scope {@value #ALL} pauses everything, a topic
 * pauses that topic. A paused dispatcher finishes what it holds and claims nothing new.
 *
 * <p>The {@code DSLContext} overloads are steps of the caller's transaction: a caller that must
 * write something else atomically with the switch (an audit row, say) runs them inside its own
 * transaction; the others open and commit one of their own.
 */
public final class OutboxControl {

    public static final String ALL = "*";

    private final DispatcherSessions sessions;
    private final ControlStore store;

    public OutboxControl(DataSource dataSource) {
        this(dataSource, SessionSettings.SESSION);
    }

    /** @param settings {@link SessionSettings#TRANSACTION} behind a transaction-mode pooler */
    public OutboxControl(DataSource dataSource, SessionSettings settings) {
        this.sessions = new DispatcherSessions(dataSource, Duration.ofSeconds(5), Duration.ofSeconds(10), settings);
        this.store = new ControlStore(SqlClock.database());
    }

    public void pause(String scope, String reason, String actor) {
        set(scope, true, reason, actor);
    }

    public void resume(String scope, String actor) {
        set(scope, false, null, actor);
    }

    public Set<String> pausedScopes() {
        return sessions.inTransaction(this::pausedScopes);
    }

    /** The paused scopes, read in the caller's transaction (or on the caller's connection). */
    public Set<String> pausedScopes(DSLContext tx) {
        return store.pausedScopes(tx);
    }

    /** Every switch, paused or not, by scope, read in the caller's transaction. */
    public static java.util.List<ControlStore.Switch> switches(DSLContext tx) {
        return new ControlStore(SqlClock.database()).switches(tx);
    }

    /**
     * Sets the switch of {@code scope} in the caller's transaction {@code tx}: nothing is committed
     * here, so whatever else the caller writes in {@code tx} stands or falls with the switch.
     */
    public void setPaused(DSLContext tx, String scope, boolean paused, String reason, String actor) {
        requireScope(scope);
        store.setPaused(tx, scope, paused, reason, actor);
    }

    private void set(String scope, boolean paused, String reason, String actor) {
        requireScope(scope); // before a connection is taken
        sessions.inTransaction(tx -> {
            setPaused(tx, scope, paused, reason, actor);
            return null;
        });
    }

    private static void requireScope(String scope) {
        if (scope == null || scope.isBlank() || scope.length() > NewMessage.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("scope must be '*' or a topic of 1.." + NewMessage.MAX_KEY_LENGTH + " characters");
        }
    }
}
