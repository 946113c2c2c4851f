package io.mailroom.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The customers of scenarios 3 and 4: {@code clients} closed-loop HTTP clients (virtual threads on
 * one {@link HttpClient}, HTTP/1.1 keep-alive) posting orders to {@code POST /orders} as fast as the
 * order service answers. Each order is a small two-line order of a distinct customer, as the demo
 * places them. A 201 yields the order id; anything else is a failure, kept with its status and body.
 */
final class OrderPoster implements AutoCloseable {

    private static final Pattern ORDER_ID = Pattern.compile("\"orderId\"\\s*:\\s*(\\d+)");
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** What one batch of posts produced. */
    record Posted(List<Long> orderIds, int failures, String firstFailure, long lastAnswerMicros) {
    }

    private final URI orders;
    private final int clients;
    private final HttpClient http;

    OrderPoster(URI orders, int clients) {
        this.orders = orders;
        this.clients = clients;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** Posts orders number {@code first} .. {@code first + count - 1} and returns when all are answered. */
    Posted post(int first, int count) throws InterruptedException {
        AtomicInteger next = new AtomicInteger(first);
        int end = first + count;
        ConcurrentLinkedQueue<Long> ids = new ConcurrentLinkedQueue<>();
        AtomicInteger failures = new AtomicInteger();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < Math.min(clients, count); c++) {
            threads.add(Thread.ofVirtual().name("bench-poster-" + c).start(() -> {
                for (int i; (i = next.getAndIncrement()) < end; ) {
                    String failure = postOne(i, ids);
                    if (failure != null) {
                        failures.incrementAndGet();
                        firstFailure.compareAndSet(null, failure);
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        return new Posted(new ArrayList<>(ids), failures.get(), firstFailure.get(), WallClock.micros());
    }

    private String postOne(int i, ConcurrentLinkedQueue<Long> ids) {
        HttpRequest request = HttpRequest.newBuilder(orders).timeout(TIMEOUT)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body(i))).build();
        try {
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
            Matcher m = ORDER_ID.matcher(r.body());
            if (r.statusCode() != 201 || !m.find()) {
                return "POST " + orders + " answered " + r.statusCode() + ": " + r.body();
            }
            ids.add(Long.parseLong(m.group(1)));
            return null;
        } catch (IOException e) {
            return "POST " + orders + " failed: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    static String body(int i) {
        return """
                {"customerEmail":"customer%d@example.com","customerName":"Customer %d","currency":"EUR",
                 "lines":[{"sku":"MUG-1","name":"Mug","quantity":2,"unitPrice":12.50},
                          {"sku":"TEA-7","name":"Green tea","quantity":1,"unitPrice":6.90}]}""".formatted(i, i);
    }

    @Override
    public void close() {
        http.close();
    }
}
