package io.mailroom.email.service;

import io.javalin.http.Context;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.io.EndPoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reads a webhook request's body within two bounds: its size (413 before reading when the declared
 * length is over it, and reading stops at it for a chunked body) and a deadline for the whole body.
 * A connection still sending at the deadline is closed from a timer, which ends the blocked read:
 * a client that sends a byte every few hundred milliseconds, never idle, holds its (virtual) thread
 * for the deadline at most, and never one of the server's in-flight slots, which are taken only
 * after the body is here.
 */
final class BoundedBody implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BoundedBody.class);

    private final int maxBytes;
    private final Duration deadline;
    private final ScheduledThreadPoolExecutor timer;

    BoundedBody(int maxBytes, Duration deadline) {
        this.maxBytes = maxBytes;
        this.deadline = deadline;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "webhooks-read-deadline");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
    }

    /** The answer, when there is no body to go on with. */
    record Refusal(int status, String code, String message) {
    }

    /** Either the body or why not; exactly one is non-null. */
    record Read(byte[] body, Refusal refusal) {
    }

    Read read(Context ctx) {
        long declared = ctx.req().getContentLengthLong();
        if (declared > maxBytes) {
            return new Read(null, tooLarge());
        }
        EndPoint connection = ServletContextRequest.getServletContextRequest(ctx.req())
                .getConnectionMetaData().getConnection().getEndPoint();
        AtomicBoolean expired = new AtomicBoolean();
        ScheduledFuture<?> abort = timer.schedule(() -> {
            expired.set(true);
            connection.close();
        }, deadline.toMillis(), TimeUnit.MILLISECONDS);
        try (InputStream in = ctx.req().getInputStream()) {
            byte[] body = in.readNBytes(maxBytes + 1);
            if (body.length > maxBytes) {
                return new Read(null, tooLarge());
            }
            return new Read(body, null);
        } catch (IOException e) {
            if (expired.get()) {
                log.info("Webhook body from {} not received within {}; connection closed", ctx.req().getRemoteAddr(), deadline);
                return new Read(null, new Refusal(408, "timeout", "the body did not arrive within " + deadline.toMillis() + " ms"));
            }
            return new Read(null, new Refusal(400, "malformed", "the body could not be read"));
        } finally {
            abort.cancel(false);
        }
    }

    private Refusal tooLarge() {
        return new Refusal(413, "too_large", "the body is larger than " + maxBytes + " bytes");
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
