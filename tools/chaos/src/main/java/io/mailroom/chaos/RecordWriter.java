package io.mailroom.chaos;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Appends tab-separated lines to a record file, one {@code write} call per line and no buffer in
 * this process, so every line written survives a {@code kill -9} of the writer. A field never
 * contains a tab or a line break (they are replaced by spaces); a null field is written as {@code -}.
 */
final class RecordWriter implements AutoCloseable {

    private final FileOutputStream out;

    RecordWriter(Path file) {
        try {
            this.out = new FileOutputStream(file.toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open record file " + file, e);
        }
    }

    synchronized void append(long epochMillis, Object... fields) {
        StringBuilder line = new StringBuilder(128).append(epochMillis);
        for (Object f : fields) {
            line.append('\t');
            line.append(f == null ? "-" : f.toString().replace('\t', ' ').replace('\n', ' ').replace('\r', ' '));
        }
        line.append('\n');
        try {
            out.write(line.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to the record file", e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException ignored) {
            // closing at exit
        }
    }
}
