package io.mailroom.email.transport.http;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.EmailJson;
import io.mailroom.email.Email;
import io.mailroom.email.Text;
import io.mailroom.email.transport.IdempotencyKeys;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.MultiplexConnectionPool;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportDynamic;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.ClientConnectionFactoryOverHTTP2;
import org.eclipse.jetty.io.ClientConnectionFactory;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;

import javax.net.ssl.SSLHandshakeException;
import java.net.SocketTimeoutException;
import java.net.http.HttpRequest;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Sends emails through an HTTP mail API with Jetty's {@link HttpClient}; the wire format is a
 * {@link MailApiAdapter}. The idempotency key goes to the provider on every attempt, so a repeat
 * after an ambiguous outcome is deduplicated there.
 *
 * <p>Connections are kept open and reused: at most {@code MAILROOM_HTTP_POOL_SIZE} (by default the
 * send concurrency, so no send waits for one), each closed after {@link #IDLE_TIMEOUT} unused. Over
 * https with {@code MAILROOM_HTTP_VERSION=auto} the TLS handshake offers HTTP/2 and HTTP/1.1 (ALPN)
 * and the provider chooses; on HTTP/2 concurrent sends are streams of the connections open. With
 * {@code auto} the protocol is known only once a connection is up, so a burst of sends at start may
 * open up to the pool size of them, as for HTTP/1.1; with {@code MAILROOM_HTTP_VERSION=2} it opens one
 * and more only past the provider's stream limit. Jetty's client
 * replaced the JDK's for its cost: about half the CPU per request (BENCHMARKS.md, "HTTP clients").
 *
 * <p>Classification by status code:
 * <ul>
 *   <li>2xx: sent; the provider's message id comes from the body;</li>
 *   <li>400, 422 and any other 4xx not listed here: permanent, with the provider's error kept (bounded);</li>
 *   <li>408, 425: transient (the provider did not process the request);</li>
 *   <li>409: transient after {@code MAILROOM_HTTP_CONFLICT_RETRY_AFTER}: a request with this key is
 *       still in flight at the provider; about this email only, so the circuit breaker does not count it;</li>
 *   <li>429 and 5xx: transient, honouring {@code Retry-After} (seconds or HTTP-date);</li>
 *   <li>401, 403, 407: misconfigured (credentials); 404, 405 and 3xx: misconfigured (the endpoint
 *       is wrong, so every email would fail the same way).</li>
 * </ul>
 * Other 4xx are permanent and about one email, so they do not count toward the breaker either;
 * 5xx, 408, 429 and timeouts are about the provider and do. Every status reaches this
 * classification as the provider sent it: the client follows no redirect, answers no
 * authentication challenge and asks for no compression.
 *
 * <p>And by when the exchange failed: before the request began to be written on a connection (no
 * connection within the connect timeout, connection refused, a failed TLS handshake:
 * {@code http-tls}) it is transient, since nothing reached the provider; once it began, a timeout
 * waiting for the response or a connection lost mid-exchange is ambiguous. The request timeout
 * counts from that moment, not from the wait for a connection.
 */
public final class HttpMailTransport implements MailTransport {

    public static final String NAME = "http";
    static final int MAX_RESPONSE_BYTES = 64 * 1024;
    static final int MAX_ERROR_CHARS = 2000;
    /** Concurrent streams a new HTTP/2 connection is expected to allow: the least RFC 9113 asks a server to. */
    static final int ASSUMED_STREAMS = 100;
    /** An unused connection is closed after this (the JDK client's keep-alive default). */
    static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);

    private static final Logger log = LoggerFactory.getLogger(HttpMailTransport.class);

    private final HttpMailConfig config;
    private final MailApiAdapter adapter;
    private final Clock clock;
    private final HttpClient client;
    private final JsonMapper json = EmailJson.mapper();

    public HttpMailTransport(HttpMailConfig config) {
        this(config, new JsonMailApiAdapter(config), Clock.systemUTC());
    }

    /** @param clock turns an HTTP-date {@code Retry-After} into a delay */
    public HttpMailTransport(HttpMailConfig config, MailApiAdapter adapter, Clock clock) {
        this.config = Objects.requireNonNull(config, "config");
        this.adapter = Objects.requireNonNull(adapter, "adapter");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.client = newClient(config);
    }

    private static HttpClient newClient(HttpMailConfig config) {
        ClientConnector connector = new ClientConnector();
        connector.setConnectTimeout(config.connectTimeout());
        connector.setIdleTimeout(IDLE_TIMEOUT);
        // The host name check stays on (HTTPS endpoint identification is SslContextFactory.Client's
        // default): a trust store changes only whom we trust.
        SslContextFactory.Client tls = new SslContextFactory.Client();
        if (config.trustStore() != null) {
            tls.setSslContext(config.trustStore().sslContext());
        }
        connector.setSslContextFactory(tls);
        ClientConnectionFactory.Info http2 = new ClientConnectionFactoryOverHTTP2.HTTP2(new HTTP2Client(connector));
        ClientConnectionFactory.Info http11 = HttpClientConnectionFactory.HTTP11;
        // Over TLS the list is what ALPN offers, in order of preference; in cleartext the first is spoken.
        List<ClientConnectionFactory.Info> protocols = switch (config.version()) {
            case AUTO -> config.secure() ? List.of(http2, http11) : List.of(http11);
            case HTTP_1_1 -> List.of(http11);
            case HTTP_2 -> List.of(http2);
        };
        HttpClientTransportDynamic transport = new HttpClientTransportDynamic(connector, protocols.toArray(ClientConnectionFactory.Info[]::new));
        if (config.version() == HttpMailConfig.Version.HTTP_2) {
            // Every connection will be HTTP/2, so one still being opened already counts for
            // ASSUMED_STREAMS sends: a burst of sends at start opens one connection, not one each.
            // Once open, the provider's own stream limit replaces the guess, and more connections
            // (up to the pool size) are opened only past it.
            transport.setConnectionPoolFactory(destination -> new MultiplexConnectionPool(destination, config.poolSize(), ASSUMED_STREAMS));
        }
        HttpClient client = new HttpClient(transport);
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("mailroom-http");
        threads.setDaemon(true);
        client.setExecutor(threads);
        client.setScheduler(new ScheduledExecutorScheduler("mailroom-http-scheduler", true));
        client.setMaxConnectionsPerDestination(config.poolSize());
        client.setIdleTimeout(IDLE_TIMEOUT.toMillis());
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setUserAgentField(new HttpField(HttpHeader.USER_AGENT, "Mailroom"));
        try {
            client.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the HTTP client", e);
        }
        // Installed by start(): no redirect, authentication challenge or 100-continue handling, so that
        // every status, a 401 without WWW-Authenticate included, reaches the classification as it came;
        // and no Accept-Encoding, so that the body limit counts what the provider sent.
        client.getProtocolHandlers().clear();
        client.getContentDecoderFactories().clear();
        return client;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public SendResult send(Email email, String idempotencyKey) {
        Objects.requireNonNull(email, "email");
        SendResult.Permanent badKey = IdempotencyKeys.check(idempotencyKey);
        if (badKey != null) {
            return badKey;
        }
        HttpRequest described;
        byte[] body;
        try {
            described = adapter.request(email, idempotencyKey).timeout(config.requestTimeout()).build();
            body = PublishedBody.of(described);
        } catch (IllegalArgumentException e) {
            return new SendResult.Permanent("invalid-request", "cannot build the HTTP request: " + Text.bounded(e.getMessage(), 200));
        }
        AtomicBoolean begun = new AtomicBoolean();
        long responseMillis = config.requestTimeout().toMillis();
        // A backstop over the whole exchange, waiting for a connection included; the response timer
        // proper starts when the request begins to be written.
        long backstopMillis = config.connectTimeout().toMillis() + responseMillis;
        LimitedBody received = new LimitedBody(MAX_RESPONSE_BYTES);
        Request request = client.newRequest(described.uri())
                .method(described.method())
                .headers(h -> described.headers().map().forEach((name, values) -> values.forEach(v -> h.add(name, v))))
                .timeout(backstopMillis, TimeUnit.MILLISECONDS)
                .idleTimeout(backstopMillis, TimeUnit.MILLISECONDS);
        if (body != null) {
            // the adapter's Content-Type header is sent as it is; this one only stands in for a missing header
            request.body(new BytesRequestContent(described.headers().firstValue("Content-Type").orElse("application/octet-stream"), body));
        }
        request.onRequestBegin(r -> {
            begun.set(true);
            Scheduler.Task timer = client.getScheduler().schedule(() -> r.abort(new NoResponseInTime()), responseMillis, TimeUnit.MILLISECONDS);
            received.result().whenComplete((x, e) -> timer.cancel());
        });
        request.send(received);
        LimitedBody.Received response;
        try {
            response = received.result().get();
        } catch (ExecutionException e) {
            return failed(e.getCause(), begun.get(), described);
        } catch (InterruptedException e) {
            request.abort(e);
            Thread.currentThread().interrupt();
            return new SendResult.Ambiguous("interrupted while waiting for " + endpoint(described));
        }
        SendResult result = classify(response.status(), response.body(),
                RetryAfter.parse(response.headers().get("Retry-After"), clock.instant()));
        log.debug("HTTP mail API answered {} for key {}", response.status(), idempotencyKey);
        return result;
    }

    /** An exchange that ended without a response: transient if nothing was written, else ambiguous. */
    private SendResult failed(Throwable failure, boolean begun, HttpRequest request) {
        if (!begun) {
            if (causedBy(failure, SSLHandshakeException.class)) {
                return new SendResult.Transient("http-tls", "TLS handshake with " + endpoint(request) + " failed (" + describe(rootCause(failure))
                        + "; is the certificate issued by a CA in MAILROOM_HTTP_TRUSTSTORE, or the JDK's, and for this host?)");
            }
            if (causedBy(failure, SocketTimeoutException.class) || causedBy(failure, TimeoutException.class)) {
                return new SendResult.Transient("http-connect-timeout", "no connection to " + endpoint(request) + " within "
                        + config.connectTimeout().toMillis() + " ms");
            }
            return new SendResult.Transient("http-connect", "cannot connect to " + endpoint(request) + " (" + describe(failure) + ")");
        }
        if (failure instanceof NoResponseInTime || causedBy(failure, TimeoutException.class)) {
            return new SendResult.Ambiguous("no response from " + endpoint(request) + " within " + config.requestTimeout().toMillis()
                    + " ms after the request was sent");
        }
        return new SendResult.Ambiguous("connection to " + endpoint(request) + " failed while the request may have been in flight ("
                + describe(failure) + ")");
    }

    /** The response timer ran out after the request began to be written. */
    private static final class NoResponseInTime extends TimeoutException {
        NoResponseInTime() {
            super("no response within the request timeout");
        }
    }

    SendResult classify(int status, String body, Duration retryAfter) {
        String code = "http-" + status;
        if (status >= 200 && status < 300) {
            String id = adapter.messageId(body);
            if (id == null) {
                log.warn("HTTP mail API accepted an email (status {}) without a readable message id", status);
            }
            ObjectNode detail = json.createObjectNode();
            detail.put("transport", NAME);
            detail.put("status", status);
            detail.put("providerMessageId", id == null ? null : Text.bounded(id, 200));
            return new SendResult.Sent(id, detail.toString());
        }
        // Redacted before it is cut, so a token straddling the cut cannot leave a prefix behind.
        String error = "HTTP " + status + ": " + Text.bounded(redactToken(adapter.errorText(body)), MAX_ERROR_CHARS);
        return switch (status) {
            case 401, 403, 407 -> new SendResult.Misconfigured(code, error + " (check MAILROOM_HTTP_TOKEN)");
            case 404, 405 -> new SendResult.Misconfigured(code, error + " (check MAILROOM_HTTP_BASE_URL)");
            case 408, 425 -> new SendResult.Transient(code, error, retryAfter);
            // About this email's key only: the provider is up, so the breaker must not count it.
            case 409 -> new SendResult.Transient(code, "a request with this idempotency key is still in progress at the provider",
                    config.conflictRetryAfter(), true, SendResult.Scope.EMAIL);
            case 429 -> new SendResult.Transient(code, error, retryAfter);
            default -> {
                if (status >= 500 && status < 600) {
                    yield new SendResult.Transient(code, error, retryAfter);
                }
                if (status >= 400 && status < 500) {
                    yield new SendResult.Permanent(code, error);
                }
                yield new SendResult.Misconfigured(code, error + " (unexpected status; check MAILROOM_HTTP_BASE_URL)");
            }
        };
    }

    public HttpMailConfig config() {
        return config;
    }

    @Override
    public void close() {
        try {
            client.stop();
        } catch (Exception e) {
            log.warn("HTTP client did not stop cleanly: {}", e.toString());
        }
    }

    /**
     * The provider's text with our token masked. Some providers quote the credential they refused
     * ("invalid api key sk_..."), and an error text travels on: into the log line of a halted
     * transport, into {@code last_error} and onto {@code /health/ready}.
     */
    String redactToken(String text) {
        String token = config.token();
        return text == null || token == null || token.isEmpty() ? text : text.replace(token, "****");
    }

    private static Throwable rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    private static String endpoint(HttpRequest request) {
        return request.uri().getScheme() + "://" + request.uri().getAuthority();
    }

    private static String describe(Throwable e) {
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + Text.bounded(message, 200));
    }
}
