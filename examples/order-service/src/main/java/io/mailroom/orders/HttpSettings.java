package io.mailroom.orders;

/**
 * How the order service's HTTP server listens. Immutable; the constructor rejects bad values with
 * a message naming the setting and its environment variable. Nothing is clamped silently.
 *
 * @param host         interface to bind, e.g. {@code 0.0.0.0} (all) or {@code 127.0.0.1}
 * @param port         TCP port, 0 for any free one (see {@link OrderServer#port()})
 * @param maxBodyBytes largest request body accepted; larger ones get 413
 * @param maxThreads   Jetty's request thread pool size
 */
public record HttpSettings(String host, int port, int maxBodyBytes, int maxThreads) {

    public static final String DEFAULT_HOST = "0.0.0.0";
    public static final int DEFAULT_PORT = 8081;
    /** An order of 100 lines with long names is well under 64 KiB. */
    public static final int DEFAULT_MAX_BODY_BYTES = 64 * 1024;
    public static final int MIN_BODY_BYTES = 1024;
    public static final int MAX_BODY_BYTES = 16 * 1024 * 1024;
    public static final int DEFAULT_MAX_THREADS = 32;
    /** Jetty needs an acceptor, a selector and a few workers. */
    public static final int MIN_THREADS = 8;
    public static final int MAX_THREADS = 1000;

    public HttpSettings {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("host (MAILROOM_ORDERS_HOST) must not be blank");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port (MAILROOM_ORDERS_PORT) must be between 0 and 65535, got " + port);
        }
        if (maxBodyBytes < MIN_BODY_BYTES || maxBodyBytes > MAX_BODY_BYTES) {
            throw new IllegalArgumentException("maxBodyBytes (MAILROOM_ORDERS_MAX_BODY_BYTES) must be between "
                    + MIN_BODY_BYTES + " and " + MAX_BODY_BYTES + ", got " + maxBodyBytes);
        }
        if (maxThreads < MIN_THREADS || maxThreads > MAX_THREADS) {
            throw new IllegalArgumentException("maxThreads (MAILROOM_ORDERS_HTTP_THREADS) must be between "
                    + MIN_THREADS + " and " + MAX_THREADS + ", got " + maxThreads);
        }
    }

    /** All defaults: every interface, port {@value #DEFAULT_PORT}. */
    public static HttpSettings defaults() {
        return new HttpSettings(DEFAULT_HOST, DEFAULT_PORT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_THREADS);
    }

    /** Defaults on {@code host} and {@code port}, e.g. {@code ("127.0.0.1", 0)} for a test or an embedding demo. */
    public static HttpSettings of(String host, int port) {
        return new HttpSettings(host, port, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_THREADS);
    }

    public HttpSettings withPort(int newPort) {
        return new HttpSettings(host, newPort, maxBodyBytes, maxThreads);
    }

    public HttpSettings withMaxBodyBytes(int bytes) {
        return new HttpSettings(host, port, bytes, maxThreads);
    }
}
