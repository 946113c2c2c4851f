package io.mailroom.bench;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.dispatch.EmailComposer;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.idempotency.Fingerprint;
import io.mailroom.orders.ShopTemplates;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.templates.TemplateCatalogue;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What composing one email costs the dispatcher, alone: the dispatcher-only scenario's order
 * confirmations (every third in Vietnamese) composed by the service's {@link TemplatedComposer} with
 * the shop's templates, and their fingerprints taken, on one thread, with nothing else running.
 * The email path's drains move by ±10 % from run to run on this machine; this moves by about 1 %,
 * so a change to rendering is measured here, on each build's class path in turn:
 *
 * <pre>java -cp tools/benchmarks/target/classes:$(cat tools/benchmarks/target/classpath.txt) io.mailroom.bench.ComposeCost [composes per round]</pre>
 */
public final class ComposeCost {

    public static void main(String[] args) throws Exception {
        int perRound = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = 7;
        TemplateCatalogue catalogue = TemplateCatalogue.load(ShopTemplates.temporaryCopy());
        String topic = DispatchOnly.TEMPLATE;
        EmailComposer composer = new TemplatedComposer(catalogue,
                Map.of(topic, new EmailTopics.Route(topic, DispatchOnly.TEMPLATE, null, null, null)),
                EmailAddress.of("shop@example.com", "Shop"), 10_000_000, List.of());
        // the payloads exactly as the email API writes them
        Method envelope = EmailOutbox.class.getDeclaredMethod("envelope", OutgoingEmail.class);
        envelope.setAccessible(true);
        List<ClaimedMessage> messages = new ArrayList<>();
        for (long seq = 1; seq <= 300; seq++) {
            String payload = (String) envelope.invoke(null, DispatchOnly.Writer.email(seq));
            messages.add(new ClaimedMessage(seq, Instant.now(), topic, "order", Long.toString(seq), "compose-" + seq, null,
                    payload, 1, 10, 1, Instant.now(), Instant.now().plusSeconds(60)));
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sink = 0;
        for (int i = 0; i < 3 * perRound; i++) { // warm-up: the JIT's tiers
            sink += compose(composer, messages.get(i % messages.size()));
        }
        double[] micros = new double[rounds];
        double[] bytes = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            long allocated = threads.getCurrentThreadAllocatedBytes();
            long cpu = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < perRound; i++) {
                sink += compose(composer, messages.get(i % messages.size()));
            }
            micros[r] = (threads.getCurrentThreadCpuTime() - cpu) / 1_000.0 / perRound;
            bytes[r] = (double) (threads.getCurrentThreadAllocatedBytes() - allocated) / perRound;
        }
        Arrays.sort(micros);
        Arrays.sort(bytes);
        System.out.printf("compose + fingerprint, order_confirmation (en and vi): %,d per round, %d rounds, JDK %s, load %.2f%n",
                perRound, rounds, Runtime.version(), LoadAverage.oneMinute());
        System.out.printf("CPU µs per email: median %.1f (min %.1f, max %.1f); allocated KiB per email: median %.1f%n",
                micros[rounds / 2], micros[0], micros[rounds - 1], bytes[rounds / 2] / 1024);
        if (sink == 42) {
            System.out.println();
        }
    }

    private static long compose(EmailComposer composer, ClaimedMessage m) throws Exception {
        EmailComposer.Composed c = composer.compose(m);
        return c.email().htmlBody().length() + Fingerprint.of(c.fingerprintParts().toArray(String[]::new)).hex().length();
    }
}
