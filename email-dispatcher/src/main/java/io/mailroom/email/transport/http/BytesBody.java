package io.mailroom.email.transport.http;

import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.Flow;

/**
 * A request body already in bytes, which {@link PublishedBody} takes as it is instead of copying it
 * out of a publisher; to anyone else it publishes those bytes as the JDK's byte-array publisher does.
 */
final class BytesBody implements HttpRequest.BodyPublisher {

    private final byte[] bytes;
    private final HttpRequest.BodyPublisher publisher;

    BytesBody(byte[] bytes) {
        this.bytes = Objects.requireNonNull(bytes, "bytes");
        this.publisher = HttpRequest.BodyPublishers.ofByteArray(bytes);
    }

    /** The bytes themselves, not a copy: no one writes to them. */
    byte[] bytes() {
        return bytes;
    }

    @Override
    public long contentLength() {
        return bytes.length;
    }

    @Override
    public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
        publisher.subscribe(subscriber);
    }
}
