package io.mailroom.email.resilience;

import io.mailroom.email.Email;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/** An in-memory transport whose n-th call (from 0) answers {@code script.apply(n)}; records calls. */
final class ScriptedTransport implements MailTransport {

    private final String name;
    private final IntFunction<SendResult> script;
    final AtomicInteger calls = new AtomicInteger();
    final List<Long> callNanos = new CopyOnWriteArrayList<>();

    ScriptedTransport(String name, IntFunction<SendResult> script) {
        this.name = name;
        this.script = script;
    }

    static ScriptedTransport always(SendResult result) {
        return new ScriptedTransport("scripted", n -> result);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public SendResult send(Email email, String idempotencyKey) {
        callNanos.add(System.nanoTime());
        return script.apply(calls.getAndIncrement());
    }
}
