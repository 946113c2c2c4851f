package io.mailroom.email.dispatch;

import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.suppression.SuppressionPolicy;

import java.util.Objects;
import java.util.function.Function;

/**
 * The suppression list as the email handler consults it: the list, and the policy of each topic
 * (strict unless the topic's line says otherwise). {@link #OFF} checks nothing; the service always
 * checks.
 */
public record SuppressionCheck(SuppressionList list, Function<String, SuppressionPolicy> policyOfTopic) {

    public static final SuppressionCheck OFF = new SuppressionCheck(null, topic -> SuppressionPolicy.STRICT);

    public SuppressionCheck {
        Objects.requireNonNull(policyOfTopic, "policyOfTopic");
    }

    boolean on() {
        return list != null;
    }

    SuppressionPolicy policy(String topic) {
        SuppressionPolicy p = policyOfTopic.apply(topic);
        return p == null ? SuppressionPolicy.STRICT : p;
    }
}
