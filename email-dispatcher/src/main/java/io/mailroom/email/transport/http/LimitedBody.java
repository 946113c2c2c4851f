package io.mailroom.email.transport.http;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * Reads at most {@code maxBytes} of a response body as UTF-8 (malformed bytes replaced), then
 * stops reading. A provider's answer is a small JSON document; an endless or huge body must not
 * hold a sender or fill the heap.
 */
final class LimitedBody implements HttpResponse.BodySubscriber<String> {

    private final int maxBytes;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private final CompletableFuture<String> result = new CompletableFuture<>();
    private Flow.Subscription subscription;

    private LimitedBody(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    static HttpResponse.BodyHandler<String> handler(int maxBytes) {
        return info -> new LimitedBody(maxBytes);
    }

    @Override
    public CompletionStage<String> getBody() {
        return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        this.subscription = subscription;
        subscription.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
        if (result.isDone()) {
            return;
        }
        for (ByteBuffer item : items) {
            int take = Math.min(item.remaining(), maxBytes - buffer.size());
            byte[] bytes = new byte[take];
            item.get(bytes);
            buffer.write(bytes, 0, take);
            if (buffer.size() >= maxBytes) {
                subscription.cancel();
                complete();
                return;
            }
        }
    }

    @Override
    public void onError(Throwable throwable) {
        result.completeExceptionally(throwable);
    }

    @Override
    public void onComplete() {
        complete();
    }

    private void complete() {
        result.complete(buffer.toString(StandardCharsets.UTF_8));
    }
}
