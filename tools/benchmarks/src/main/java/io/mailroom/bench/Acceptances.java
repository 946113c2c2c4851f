package io.mailroom.bench;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a loopback provider ({@link StubProviderMain}, {@link SmtpSinkMain}) accepted, and its
 * conversation with the benchmark that started it. Per id (the HTTP {@code Idempotency-Key}, the
 * SMTP {@code Message-ID}) it keeps the wall-clock time of the first acceptance ({@link WallClock},
 * comparable with commit times taken in another process) and how many times the id was accepted;
 * the benchmark checks that every order's id was accepted exactly once and nothing else was.
 *
 * <p>Protocol, one line each way: the provider prints {@code READY <port>} once it listens;
 * {@code COUNT} is answered {@code COUNT <distinct ids> <acceptances> <refused requests>};
 * {@code DUMP <file>} writes one line {@code id TAB first-accept-micros TAB times} per id and is
 * answered {@code DUMPED <lines>}; {@code STOP} or the end of input ends the process.
 */
final class Acceptances {

    /** One id: when it was first accepted (µs since the epoch) and how many times in all. */
    record Entry(long firstMicros, int times) {
    }

    private final Map<String, Entry> byId = new ConcurrentHashMap<>();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    /** Records one acceptance of {@code id} now; returns the entry after it. */
    Entry accept(String id) {
        long now = WallClock.micros();
        accepted.incrementAndGet();
        return byId.merge(id, new Entry(now, 1), (old, one) -> new Entry(old.firstMicros(), old.times() + 1));
    }

    /** A request the provider turned away (bad token, no key, malformed): not an email. */
    void refuse() {
        refused.incrementAndGet();
    }

    /** Answers the parent on stdin/stdout until {@code STOP} or the end of input. */
    void serve(int port) throws IOException {
        System.out.println("READY " + port);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("STOP")) {
            if (line.equals("COUNT")) {
                System.out.println("COUNT " + byId.size() + " " + accepted.get() + " " + refused.get());
            } else if (line.startsWith("DUMP ")) {
                System.out.println("DUMPED " + dump(Path.of(line.substring(5).trim())));
            } else {
                System.out.println("UNKNOWN " + line);
            }
            System.out.flush();
        }
    }

    private int dump(Path file) throws IOException {
        Map<String, Entry> snapshot = Map.copyOf(byId);
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (var e : snapshot.entrySet()) {
                w.write(e.getKey() + "\t" + e.getValue().firstMicros() + "\t" + e.getValue().times() + "\n");
            }
        }
        return snapshot.size();
    }

    /** Reads a {@code DUMP} file back. */
    static Map<String, Entry> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Map<String, Entry> out = new HashMap<>(lines.size() * 2);
        for (String line : lines) {
            String[] f = line.split("\t");
            if (f.length != 3) {
                throw new IllegalStateException("malformed line in " + file + ": " + line);
            }
            out.put(f[0], new Entry(Long.parseLong(f[1]), Integer.parseInt(f[2])));
        }
        return out;
    }

    /** The parent's side of {@code COUNT}. */
    record Count(long distinct, long accepted, long refused) {
        static Count parse(String line) {
            String[] f = line.split(" ");
            if (f.length != 4 || !f[0].equals("COUNT")) {
                throw new IllegalStateException("not a COUNT answer: " + line);
            }
            return new Count(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]));
        }
    }
}
