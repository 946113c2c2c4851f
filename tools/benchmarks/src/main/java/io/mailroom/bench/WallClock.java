package io.mailroom.bench;

import java.time.Instant;

/**
 * Wall-clock time in microseconds since the epoch, for intervals that start in one process and end
 * in another (an order committed here, its email accepted by the provider stub in its own JVM).
 * {@link System#nanoTime()} has an arbitrary origin per JVM and cannot be compared across
 * processes; {@link Instant#now()} reads the kernel's realtime clock, the same clock in every
 * process of this host, with microsecond resolution on Linux. An NTP step during a run would show
 * as an outlier; NTP slewing (at most 0.05 %) changes a 10 ms interval by 5 µs.
 */
final class WallClock {

    private WallClock() {
    }

    static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }
}
