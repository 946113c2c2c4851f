package io.mailroom.bench;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.locks.LockSupport;

/**
 * An open-loop load: task {@code i} is handed to the executor at {@code start + i / rate}, whether
 * or not the earlier ones have finished, so a slow transaction does not delay the next arrival
 * (the way orders arrive in a shop). Returns the start, in {@link System#nanoTime()}.
 */
final class Pacer {

    private Pacer() {
    }

    @FunctionalInterface
    interface Task {
        void run(int i);
    }

    static long run(int count, int perSecond, ExecutorService executor, Task task) {
        long period = 1_000_000_000L / perSecond;
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            long due = t0 + i * period;
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
            }
            int seq = i;
            executor.execute(() -> task.run(seq));
        }
        return t0;
    }
}
