package io.mailroom.email.transport.http;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The bytes of a {@link HttpRequest}'s body. A {@link MailApiAdapter} describes its request with the
 * JDK's immutable {@code HttpRequest} (method, URI, validated headers, body publisher); the transport
 * sends it with another client, so the body is read out of the publisher once, here. The JDK's
 * publishers of strings and byte arrays deliver at once, on the subscribing thread.
 */
final class PublishedBody {

    private static final long LIMIT_SECONDS = 10;

    private PublishedBody() {
    }

    /** The body, or null when the request has none. */
    static byte[] of(HttpRequest request) {
        HttpRequest.BodyPublisher publisher = request.bodyPublisher().orElse(null);
        if (publisher == null || publisher.contentLength() == 0) {
            return null;
        }
        if (publisher instanceof BytesBody b) {
            return b.bytes();
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(publisher.contentLength() > 0 ? (int) publisher.contentLength() : 4096);
        CompletableFuture<byte[]> done = new CompletableFuture<>();
        publisher.subscribe(new Flow.Subscriber<>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(ByteBuffer item) {
                byte[] bytes = new byte[item.remaining()];
                item.get(bytes);
                out.write(bytes, 0, bytes.length);
            }

            @Override
            public void onError(Throwable throwable) {
                done.completeExceptionally(throwable);
            }

            @Override
            public void onComplete() {
                done.complete(out.toByteArray());
            }
        });
        try {
            return done.get(LIMIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalArgumentException("the request body could not be read: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalArgumentException("the request body was not published within " + LIMIT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalArgumentException("interrupted while reading the request body");
        }
    }
}
