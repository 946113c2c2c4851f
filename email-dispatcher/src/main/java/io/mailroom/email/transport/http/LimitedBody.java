package io.mailroom.email.transport.http;

import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpFields;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * Reads at most {@code maxBytes} of a response body as UTF-8 (malformed bytes replaced), then
 * stops reading: the rest of the exchange is aborted and the status, headers and bytes read so far
 * are the answer. A provider's answer is a small JSON document; an endless or huge body must not
 * hold a sender or fill the heap.
 */
final class LimitedBody implements Response.Listener {

    /** What was received: status, headers and the (possibly cut) body. */
    record Received(int status, HttpFields headers, String body) {
    }

    /** The abort cause once the limit is reached: not a failure of the exchange. */
    private static final class LimitReached extends RuntimeException {
        LimitReached() {
            super("response body limit reached", null, false, false);
        }
    }

    private final int maxBytes;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private final CompletableFuture<Received> result = new CompletableFuture<>();

    LimitedBody(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** Completes with what was received, or exceptionally with the exchange's failure. */
    CompletableFuture<Received> result() {
        return result;
    }

    @Override
    public void onContent(Response response, ByteBuffer content) {
        // Jetty calls the content listener from one thread at a time; the lock orders it with onComplete
        synchronized (buffer) {
            if (buffer.size() >= maxBytes) {
                return;
            }
            int take = Math.min(content.remaining(), maxBytes - buffer.size());
            byte[] bytes = new byte[take];
            content.get(bytes);
            buffer.write(bytes, 0, take);
            if (buffer.size() < maxBytes) {
                return;
            }
        }
        response.abort(new LimitReached());
    }

    @Override
    public void onComplete(Result outcome) {
        Throwable failure = outcome.getFailure();
        if (failure != null && !(failure instanceof LimitReached)) {
            result.completeExceptionally(failure);
            return;
        }
        String body;
        synchronized (buffer) {
            body = buffer.toString(StandardCharsets.UTF_8);
        }
        Response response = outcome.getResponse();
        result.complete(new Received(response.getStatus(), response.getHeaders(), body));
    }
}
