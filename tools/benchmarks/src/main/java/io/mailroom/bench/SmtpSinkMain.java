package io.mailroom.bench;

import io.mailroom.email.transport.smtp.MessageIds;
import io.mailroom.testing.SmtpSink;

import java.time.Duration;

/**
 * The loopback SMTP server of scenario 4, in a process of its own: {@link SmtpSink} without faults
 * or authentication, accepting every message and counting it by its {@code Message-ID} (which the
 * SMTP transport derives from the idempotency key, {@link MessageIds}). A message is counted when
 * its data has arrived in full, before the {@code 250} reply; one without a Message-ID is refused
 * and counted as refused. Nothing is kept.
 *
 * <p>Why not GreenMail (a dependency of the email dispatcher's demo): it parses and stores every
 * message in memory, which at thousands of messages per second would measure GreenMail.
 *
 * <p>Arguments: the loopback port (0 or none: any free one), then optionally {@code pipelining}
 * to advertise PIPELINING ({@link SmtpSink.Settings#pipelining()}) or {@code plain}, then
 * optionally a reply delay in microseconds standing in for a network round trip
 * ({@link SmtpSink.Settings#replyDelay()}). Talks with the parent as {@link Acceptances} describes.
 */
public final class SmtpSinkMain {

    private SmtpSinkMain() {
    }

    public static void main(String[] args) throws Exception {
        Logging.configure();
        Acceptances acceptances = new Acceptances();
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        boolean pipelining = args.length > 1 && args[1].equals("pipelining");
        Duration replyDelay = Duration.ofNanos(args.length > 2 ? Long.parseLong(args[2]) * 1_000 : 0);
        SmtpSink.Settings settings = SmtpSink.Settings.plain(port).withPipelining(pipelining).withReplyDelay(replyDelay);
        try (SmtpSink sink = SmtpSink.start(settings, (outcome, messageId, recipient) -> {
            if (outcome == SmtpSink.Outcome.DELIVERED) {
                acceptances.accept(messageId);
            } else {
                acceptances.refuse();
            }
        })) {
            acceptances.serve(sink.port());
        }
    }
}
