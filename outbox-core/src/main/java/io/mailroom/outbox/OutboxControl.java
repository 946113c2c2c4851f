package io.mailroom.outbox;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.Set;

/**
 * The cluster-wide pause switches in {@code outbox_control}. Every dispatcher reads them every
 * {@link DispatcherConfig#controlPollInterval()}: scope {@value #ALL} pauses everything, a topic
 * pauses that topic. A paused dispatcher finishes what it holds and claims nothing new.
 */
public final class OutboxControl {

    public static final String ALL = "*";

    private final DispatcherSessions sessions;
    private final OutboxStore store;

    public OutboxControl(DataSource dataSource) {
        this.sessions = new DispatcherSessions(dataSource, Duration.ofSeconds(5), Duration.ofSeconds(10));
        this.store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);
    }

    public void pause(String scope, String reason, String actor) {
        set(scope, true, reason, actor);
    }

    public void resume(String scope, String actor) {
        set(scope, false, null, actor);
    }

    public Set<String> pausedScopes() {
        return sessions.inTransaction(store::pausedScopes);
    }

    private void set(String scope, boolean paused, String reason, String actor) {
        if (scope == null || scope.isBlank() || scope.length() > NewMessage.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("scope must be '*' or a topic of 1.." + NewMessage.MAX_KEY_LENGTH + " characters");
        }
        sessions.inTransaction(tx -> {
            store.setPaused(tx, scope, paused, reason, actor);
            return null;
        });
    }
}
