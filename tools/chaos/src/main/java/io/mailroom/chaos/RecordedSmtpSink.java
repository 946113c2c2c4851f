package io.mailroom.chaos;

import io.mailroom.testing.SmtpSink;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The chaos run's fake mail server: {@link SmtpSink} with its faults, every outcome appended to a
 * record file (time, Message-ID, outcome label, recipient) with an unbuffered write before any reply
 * goes out, so the record is complete even after a {@code kill -9}. Killing the process while a
 * client is in DATA gives the "did it go out?" uncertainty without a delivery.
 */
public final class RecordedSmtpSink implements AutoCloseable {

    private final SmtpSink sink;
    private final RecordWriter record;

    private RecordedSmtpSink(SmtpSink.Settings settings, Path recordFile) throws IOException {
        this.record = new RecordWriter(recordFile);
        try {
            this.sink = SmtpSink.start(settings, (outcome, messageId, recipient) ->
                    record.append(System.currentTimeMillis(), messageId, outcome.label(), recipient));
        } catch (IOException | RuntimeException e) {
            record.close();
            throw e;
        }
    }

    public static RecordedSmtpSink start(SmtpSink.Settings settings, Path recordFile) throws IOException {
        return new RecordedSmtpSink(settings, recordFile);
    }

    public int port() {
        return sink.port();
    }

    @Override
    public void close() {
        sink.close();
        record.close();
    }

    /**
     * {@code RecordedSmtpSink --port N --record FILE --port-file FILE [--seed N] [--p-drop-before 0.02]
     * [--p451 0.02] [--p-drop-after 0.02] [--username U --password P]}: runs until killed.
     */
    public static void main(String[] args) throws Exception {
        Args a = Args.parse(args);
        SmtpSink.Faults faults = new SmtpSink.Faults(a.longValue("seed", 1), a.decimal("p-drop-before", 0.02),
                a.decimal("p451", 0.02), a.decimal("p-drop-after", 0.02));
        RecordedSmtpSink sink = start(new SmtpSink.Settings(a.integer("port", 0), faults, a.string("username", null),
                a.string("password", null)), Path.of(a.required("record")));
        Runtime.getRuntime().addShutdownHook(new Thread(sink::close, "smtp-sink-stop"));
        Path portFile = Path.of(a.required("port-file"));
        Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
        Files.writeString(tmp, Integer.toString(sink.port()));
        Files.move(tmp, portFile, StandardCopyOption.ATOMIC_MOVE);
        System.out.println("SMTP sink listening on 127.0.0.1:" + sink.port());
        Thread.currentThread().join();
    }
}
