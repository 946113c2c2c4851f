package io.mailroom.outbox.admin;

import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pause switches, on their own transaction and as a step of the caller's. */
class OutboxControlTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private OutboxControl control;

    @BeforeEach
    void setUp() {
        pg.dsl().execute("TRUNCATE outbox_control, audit_log");
        control = new OutboxControl(pg.dataSource());
    }

    @Test
    void pauseAndResumeCommitOnTheirOwn() {
        control.pause(OutboxControl.ALL, "provider incident", "ops");
        assertThat(control.pausedScopes()).containsExactly(OutboxControl.ALL);
        assertThat(pg.dsl().fetchSingle("SELECT reason || '/' || updated_by FROM outbox_control WHERE scope = '*'")
                .get(0, String.class)).isEqualTo("provider incident/ops");
        control.resume(OutboxControl.ALL, "ops");
        assertThat(control.pausedScopes()).isEmpty();
    }

    @Test
    void theTransactionalStepCommitsWithTheCallersTransaction() {
        pg.dsl().transaction(cfg -> {
            control.setPaused(cfg.dsl(), "email.order_confirmation", true, "stuck template", "ops");
            cfg.dsl().execute("INSERT INTO audit_log (actor, role, action, reason) VALUES ('ops', 'operator', 'pause', 'stuck template')");
            // visible inside the caller's transaction, through the same overload the readiness check uses
            assertThat(control.pausedScopes(cfg.dsl())).containsExactly("email.order_confirmation");
        });
        assertThat(control.pausedScopes()).containsExactly("email.order_confirmation");
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("audit_log"))).isEqualTo(1);
    }

    @Test
    void theTransactionalStepRollsBackWithTheCallersTransaction() {
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
            control.setPaused(cfg.dsl(), OutboxControl.ALL, true, "incident", "ops");
            throw new IllegalStateException("the caller's next step failed");
        })).isInstanceOf(IllegalStateException.class).hasMessage("the caller's next step failed");
        assertThat(control.pausedScopes()).isEmpty();
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_control"))).isZero();
    }

    @Test
    void aBadScopeIsRefusedBeforeAnythingIsWritten() {
        assertThatThrownBy(() -> control.pause(" ", "x", "ops")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("scope");
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> control.setPaused(cfg.dsl(), "x".repeat(201), true, null, "ops")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_control"))).isZero();
    }
}
