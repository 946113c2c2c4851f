package io.mailroom.bench;

import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.transport.SendResult;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.email.transport.smtp.SmtpSecurity;
import io.mailroom.email.transport.smtp.SmtpTransport;
import io.mailroom.testing.ChildJvm;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Issue 17: what SMTP PIPELINING (RFC 2920) is worth on one connection. The SMTP transport sends
 * emails one after another over a single pooled connection to {@link SmtpSinkMain} in a process of
 * its own on the loopback interface, once against a sink that does not advertise PIPELINING (Angus
 * sends MAIL FROM, RCPT TO and DATA each after the previous reply: four round trips per email with
 * the data) and once against one that does (envelope and DATA in one write: two round trips).
 *
 * <p>Per run: a fresh sink JVM, a fresh transport (pool of one connection, no message limit that
 * would reconnect), {@code warmup} emails untimed, then {@code messages} emails timed. Reported:
 * emails per second of wall time, and CPU per email of this JVM (the client: transport, MIME
 * building, JIT and GC threads included) and of the sink JVM, from {@code /proc/<pid>/stat}. The
 * modes alternate, their order swapped every round, so a drift in the machine's load touches both.
 * The run fails unless every email was answered 250, the sink counted each once, and the timed
 * emails used one connection.
 *
 * <p>On the loopback interface a round trip costs microseconds, so what pipelining saves there is
 * mostly system calls and thread wake-ups. A relay across a network charges its round-trip time
 * for every wait: the optional {@code replyDelayMicros} has the sink wait that long before each
 * write of replies (once per group when pipelining), standing in for it.
 *
 * <p>Arguments (all optional): {@code messages} (20000), {@code rounds} (3), {@code warmup} (3000),
 * {@code replyDelayMicros} (0).
 * Run: {@code java -cp tools/benchmarks/target/classes:$(cat tools/benchmarks/target/classpath.txt)
 * io.mailroom.bench.SmtpPipelining}.
 */
public final class SmtpPipelining {

    private static final EmailAddress FROM = EmailAddress.of("shop@example.com", "Example Shop");
    private static final Email EMAIL = new Email(FROM, EmailAddress.of("ann@example.com", "Ann"), "Your order #102 is confirmed",
            "Hello Ann,\nthank you for your order #102.\n", "<p>Hello Ann,</p><p>thank you for your order #102.</p>",
            Map.of("Auto-Submitted", "auto-generated"), "bench/v1");

    record Run(String mode, int round, int messages, double seconds, double clientCpuMicrosPerEmail,
               double sinkCpuMicrosPerEmail, long connections) {

        double emailsPerSecond() {
            return messages / seconds;
        }
    }

    private SmtpPipelining() {
    }

    public static void main(String[] args) throws Exception {
        Logging.configure();
        int messages = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 3_000;
        long replyDelayMicros = args.length > 3 ? Long.parseLong(args[3]) : 0;
        if (messages + warmup > 100_000) {
            throw new IllegalArgumentException("messages + warmup must stay within one connection's limit of 100000");
        }
        System.out.printf(Locale.ROOT, "SMTP pipelining, one connection, %d emails per run (after %d untimed), %d rounds, sink reply delay %d µs;"
                        + " load average %s, %d CPUs%n",
                messages, warmup, rounds, replyDelayMicros, LoadAverage.oneMinute(), Runtime.getRuntime().availableProcessors());
        List<Run> runs = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            boolean pipeliningFirst = round % 2 == 0;
            for (boolean pipelining : new boolean[]{pipeliningFirst, !pipeliningFirst}) {
                Run run = run(pipelining, round, messages, warmup, replyDelayMicros);
                runs.add(run);
                print(run);
            }
        }
        System.out.println();
        System.out.println("median of the rounds:");
        Run off = median(runs, "no-pipelining");
        Run on = median(runs, "pipelining");
        print(off);
        print(on);
        System.out.printf(Locale.ROOT, "pipelining: %.2fx the emails/s, %.2fx the client CPU per email, %.2fx the sink CPU per email%n",
                on.emailsPerSecond() / off.emailsPerSecond(), on.clientCpuMicrosPerEmail() / off.clientCpuMicrosPerEmail(),
                on.sinkCpuMicrosPerEmail() / off.sinkCpuMicrosPerEmail());
    }

    static Run run(boolean pipelining, int round, int messages, int warmup, long replyDelayMicros) throws IOException {
        String mode = pipelining ? "pipelining" : "no-pipelining";
        List<String> jvm = List.of("-Xmx256m", "-D" + Logging.CONFIG_PROPERTY + "=" + Logging.CONFIG_RESOURCE);
        try (ChildJvm sink = ChildJvm.of("smtp-sink-" + mode, SmtpSinkMain.class.getName()).jvmOptions(jvm)
                .args(List.of("0", pipelining ? "pipelining" : "plain", Long.toString(replyDelayMicros)))
                .log(Path.of("tools/benchmarks/target/smtp-pipelining", mode + ".log")).controlled().start()) {
            int port = Integer.parseInt(sink.expect("READY ").substring(6).trim());
            SmtpConfig config = SmtpConfig.builder().host("127.0.0.1").port(port).security(SmtpSecurity.NONE).from(FROM)
                    .poolSize(1).maxMessagesPerConnection(100_000).maxIdle(Duration.ofMinutes(5))
                    .readTimeout(Duration.ofSeconds(10)).build();
            Run run;
            try (SmtpTransport transport = new SmtpTransport(config)) {
                String prefix = "bench-" + mode + "-" + round + "-";
                for (int i = 0; i < warmup; i++) {
                    sendOrFail(transport, prefix + "w" + i);
                }
                long openedBefore = transport.connectionsOpened();
                long client0 = ProcCpu.selfNanos();
                long sink0 = cpu(sink);
                long t0 = System.nanoTime();
                for (int i = 0; i < messages; i++) {
                    sendOrFail(transport, prefix + i);
                }
                long t1 = System.nanoTime();
                long client1 = ProcCpu.selfNanos();
                long sink1 = cpu(sink);
                long connections = transport.connectionsOpened() - openedBefore + 1;
                if (connections != 1) {
                    throw new IllegalStateException(mode + ": the timed emails used " + connections + " connections, not one");
                }
                run = new Run(mode, round, messages, (t1 - t0) / 1e9, (client1 - client0) / 1e3 / messages,
                        (sink1 - sink0) / 1e3 / messages, connections);
            }
            sink.send("COUNT");
            String[] count = sink.expect("COUNT ").split(" ");
            long distinct = Long.parseLong(count[1]);
            long accepted = Long.parseLong(count[2]);
            if (distinct != messages + warmup || accepted != messages + warmup) {
                throw new IllegalStateException(mode + ": the sink accepted " + accepted + " emails (" + distinct
                        + " distinct), expected " + (messages + warmup));
            }
            sink.send("STOP");
            return run;
        }
    }

    private static void sendOrFail(SmtpTransport transport, String key) {
        SendResult result = transport.send(EMAIL, key);
        if (!(result instanceof SendResult.Sent)) {
            throw new IllegalStateException("email " + key + " was not accepted: " + result);
        }
    }

    private static long cpu(ChildJvm child) {
        OptionalLong nanos = ProcCpu.nanos(child.pid());
        if (nanos.isEmpty()) {
            throw new IllegalStateException("CPU of " + child.name() + " is not readable from /proc");
        }
        return nanos.getAsLong();
    }

    /** Per figure, the median over the mode's rounds (three figures each the median on its own). */
    private static Run median(List<Run> runs, String mode) {
        List<Run> of = runs.stream().filter(r -> r.mode().equals(mode)).toList();
        return new Run(mode, 0, of.getFirst().messages(),
                medianOf(of, Run::seconds), medianOf(of, Run::clientCpuMicrosPerEmail), medianOf(of, Run::sinkCpuMicrosPerEmail), 1);
    }

    private static double medianOf(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
        double[] v = runs.stream().mapToDouble(f).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static void print(Run r) {
        System.out.printf(Locale.ROOT, "%-14s %s  %8.0f emails/s  %6.1f µs/email wall  client CPU %6.1f µs/email  sink CPU %6.1f µs/email%n",
                r.mode(), r.round() == 0 ? "median " : "round " + r.round(), r.emailsPerSecond(), r.seconds() * 1e6 / r.messages(),
                r.clientCpuMicrosPerEmail(), r.sinkCpuMicrosPerEmail());
    }
}
