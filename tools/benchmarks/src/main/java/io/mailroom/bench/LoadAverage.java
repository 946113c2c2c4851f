package io.mailroom.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The 1-minute load average, recorded with each run so a reader can see how busy the machine was. */
final class LoadAverage {

    private LoadAverage() {
    }

    static Double oneMinute() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
