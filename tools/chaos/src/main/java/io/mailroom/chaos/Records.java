package io.mailroom.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Readers of the record files the provider stub and the SMTP sink append to. */
final class Records {

    private Records() {
    }

    /** One request the provider stub answered: {@code kind} is accepted, accepted-hung, replayed, fault-500, ... */
    record ProviderLine(long at, String key, String kind, String providerId, String fingerprint, String recipient) {

        /** Whether this request made a new effect (an email the provider will deliver). */
        boolean isEffect() {
            return kind.equals("accepted") || kind.equals("accepted-hung");
        }
    }

    /** One message or session the SMTP sink saw: {@code kind} is delivered, delivered-dropped, deferred-451, dropped-before-data. */
    record SinkLine(long at, String messageId, String kind, String recipient) {

        boolean isDelivery() {
            return kind.equals("delivered") || kind.equals("delivered-dropped");
        }
    }

    static List<ProviderLine> provider(Path file) {
        List<ProviderLine> out = new ArrayList<>();
        for (String[] f : lines(file)) {
            if (f.length >= 6) {
                out.add(new ProviderLine(Long.parseLong(f[0]), nul(f[1]), f[2], nul(f[3]), nul(f[4]), nul(f[5])));
            }
        }
        return out;
    }

    static List<SinkLine> sink(Path file) {
        List<SinkLine> out = new ArrayList<>();
        for (String[] f : lines(file)) {
            if (f.length >= 4) {
                out.add(new SinkLine(Long.parseLong(f[0]), nul(f[1]), f[2], nul(f[3])));
            }
        }
        return out;
    }

    private static List<String[]> lines(Path file) {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            List<String[]> out = new ArrayList<>();
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                // a line cut short by a kill -9 mid-write has no trailing fields; skip it
                if (!line.isBlank()) {
                    out.add(line.split("\t", -1));
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    private static String nul(String s) {
        return s.equals("-") ? null : s;
    }
}
