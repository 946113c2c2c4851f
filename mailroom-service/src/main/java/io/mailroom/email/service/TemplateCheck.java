package io.mailroom.email.service;

import io.mailroom.templates.TemplateCatalogue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The template catalogue's check (compile every template, render every sample: seconds) on a
 * thread of its own, so that it runs while the health server starts and the database is awaited
 * and migrated; {@link #join()} before anything is claimed, so no email is ever sent with a
 * template that failed. A failure stops a database wait at once ({@link #interruptOnFailure}).
 * The first jOOQ statement's class loading is warmed meanwhile too.
 */
final class TemplateCheck {

    static final String PHASE = "templates (in parallel)";

    private final CompletableFuture<TemplateCatalogue> checked;

    private TemplateCheck(CompletableFuture<TemplateCatalogue> checked) {
        this.checked = checked;
    }

    static TemplateCheck start(Supplier<TemplateCatalogue> check, StartupPhases phases) {
        CompletableFuture<TemplateCatalogue> checked = CompletableFuture.supplyAsync(() -> {
            phases.begin(PHASE);
            try {
                return check.get();
            } finally {
                phases.end(PHASE);
            }
        }, runnable -> Thread.ofPlatform().daemon().name("mailroom-templates-check").start(runnable));
        // the first jOOQ statement loads and initialises a few thousand classes: do that meanwhile too
        Thread.ofPlatform().daemon().name("mailroom-jooq-warmup").start(() ->
                org.jooq.impl.DSL.using(org.jooq.SQLDialect.POSTGRES).render(org.jooq.impl.DSL.selectOne()));
        return new TemplateCheck(checked);
    }

    /** A wait that a failing check cuts short by interrupting the waiting thread. */
    interface Wait {
        void run() throws InterruptedException;
    }

    /** Runs {@code wait} on this thread; a check that fails meanwhile interrupts it. */
    void interruptOnFailure(Wait wait) throws InterruptedException {
        Thread waiting = Thread.currentThread();
        AtomicBoolean inWait = new AtomicBoolean(true);
        checked.whenComplete((ok, failed) -> {
            if (failed != null && inWait.get()) {
                waiting.interrupt();
            }
        });
        try {
            wait.run();
        } finally {
            inWait.set(false);
        }
    }

    /** The checked catalogue, once the check is over; its failure as the check threw it. */
    TemplateCatalogue join() {
        try {
            return checked.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /** If the check failed: clears the interrupt it may have caused and throws its failure. */
    void rethrowFailure() {
        if (checked.isCompletedExceptionally()) {
            Thread.interrupted();
            join();
        }
    }
}
