package io.mailroom.email.service;

import io.mailroom.outbox.runtime.DispatcherListener;

/** Dispatcher listeners told of the same events, in order. */
final class Listeners {

    private Listeners() {
    }

    /** {@code a}, then {@code b}; {@code a} alone when {@code b} is none. */
    static DispatcherListener both(DispatcherListener a, DispatcherListener b) {
        if (b == null || b == DispatcherListener.NONE) {
            return a;
        }
        return new DispatcherListener() {
            @Override
            public void claimed(int requested, int claimed, java.time.Duration took) {
                a.claimed(requested, claimed, took);
                b.claimed(requested, claimed, took);
            }

            @Override
            public void finished(io.mailroom.outbox.runtime.ClaimedMessage message, String outcome, java.time.Duration took) {
                a.finished(message, outcome, took);
                b.finished(message, outcome, took);
            }

            @Override
            public void claimLost(io.mailroom.outbox.runtime.ClaimedMessage message, String where) {
                a.claimLost(message, where);
                b.claimLost(message, where);
            }

            @Override
            public void ended(String idempotencyKey, String topic, String status, String reason, String payloadJson) {
                a.ended(idempotencyKey, topic, status, reason, payloadJson);
                b.ended(idempotencyKey, topic, status, reason, payloadJson);
            }

            @Override
            public void rescued(int count) {
                a.rescued(count);
                b.rescued(count);
            }

            @Override
            public void error(String where, Throwable error) {
                a.error(where, error);
                b.error(where, error);
            }
        };
    }
}
