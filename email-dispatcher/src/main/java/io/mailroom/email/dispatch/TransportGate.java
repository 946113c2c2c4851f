package io.mailroom.email.dispatch;

import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.outbox.runtime.ClaimGate;

import java.util.Map;

/**
 * Holds back claims for topics whose transport is not accepting work: while a circuit breaker is
 * open (or the transport is halted after a credentials error), claiming and failing would only
 * burn the attempts of healthy messages. A half-open breaker lets only its probe permits through.
 */
public final class TransportGate implements ClaimGate {

    private final Map<String, ResilientTransport> transportByTopic;

    public TransportGate(Map<String, ResilientTransport> transportByTopic) {
        this.transportByTopic = Map.copyOf(transportByTopic);
    }

    @Override
    public boolean allowsClaims(String topic) {
        ResilientTransport t = transportByTopic.get(topic);
        return t == null || t.acceptingWork();
    }

    @Override
    public int claimLimit(String topic) {
        ResilientTransport t = transportByTopic.get(topic);
        if (t == null) {
            return Integer.MAX_VALUE;
        }
        if (!t.acceptingWork()) {
            return 0;
        }
        return t.claimableNow();
    }
}
