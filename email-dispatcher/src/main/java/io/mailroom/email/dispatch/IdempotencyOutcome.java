package io.mailroom.email.dispatch;

import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Outcome;
import org.jooq.DSLContext;

import java.util.ArrayList;
import java.util.List;

/**
 * The idempotency outcome of one send, written by the completer together with the outcomes of the
 * same store in its batch: one fenced UPDATE for the batch ({@link IdempotencyStore#recordAll}).
 */
record IdempotencyOutcome(IdempotencyStore store, IdempotencyStore.Transition transition) implements Outcome.GroupedStep {

    @Override
    public Object group() {
        return store;
    }

    @Override
    public void runGroup(DSLContext tx, List<Outcome.GroupedStep> steps) {
        List<IdempotencyStore.Transition> all = new ArrayList<>(steps.size());
        for (Outcome.GroupedStep step : steps) {
            all.add(((IdempotencyOutcome) step).transition);
        }
        store.recordAll(tx, all);
    }
}
