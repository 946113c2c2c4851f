package io.mailroom.email.transport.http;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.Text;
import io.mailroom.email.transport.IdempotencyKeys;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLHandshakeException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * Sends emails through an HTTP mail API with {@link java.net.http.HttpClient}; the wire format is a
 * {@link MailApiAdapter}. The idempotency key goes to the provider on every attempt, so a repeat
 * after an ambiguous outcome is deduplicated there.
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
 * 5xx, 408, 429 and timeouts are about the provider and do.
 * And by exception type: connect failure, connect timeout or failed TLS handshake ({@code http-tls})
 * is transient (nothing was written);
 * a timeout waiting for the response, or a connection lost mid-exchange, is ambiguous.
 */
public final class HttpMailTransport implements MailTransport {

    public static final String NAME = "http";
    static final int MAX_RESPONSE_BYTES = 64 * 1024;
    static final int MAX_ERROR_CHARS = 2000;

    private static final Logger log = LoggerFactory.getLogger(HttpMailTransport.class);

    private final HttpMailConfig config;
    private final MailApiAdapter adapter;
    private final Clock clock;
    private final HttpClient client;
    private final JsonMapper json = JsonMapper.builder().build();

    public HttpMailTransport(HttpMailConfig config) {
        this(config, new JsonMailApiAdapter(config), Clock.systemUTC());
    }

    /** @param clock turns an HTTP-date {@code Retry-After} into a delay */
    public HttpMailTransport(HttpMailConfig config, MailApiAdapter adapter, Clock clock) {
        this.config = Objects.requireNonNull(config, "config");
        this.adapter = Objects.requireNonNull(adapter, "adapter");
        this.clock = Objects.requireNonNull(clock, "clock");
        HttpClient.Builder builder = HttpClient.newBuilder()
                .connectTimeout(config.connectTimeout())
                .followRedirects(HttpClient.Redirect.NEVER)
                // HTTP/1.1: one request per connection at a time, so a failure is about this request only.
                .version(HttpClient.Version.HTTP_1_1);
        if (config.trustStore() != null) {
            // Only whom we trust changes: HttpClient still checks that the certificate names the host.
            builder.sslContext(config.trustStore().sslContext());
        }
        this.client = builder.build();
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
        HttpRequest request;
        try {
            request = adapter.request(email, idempotencyKey).timeout(config.requestTimeout()).build();
        } catch (IllegalArgumentException e) {
            return new SendResult.Permanent("invalid-request", "cannot build the HTTP request: " + Text.bounded(e.getMessage(), 200));
        }
        HttpResponse<String> response;
        try {
            response = client.send(request, LimitedBody.handler(MAX_RESPONSE_BYTES));
        } catch (HttpConnectTimeoutException e) {
            return new SendResult.Transient("http-connect-timeout", "no connection to " + endpoint(request) + " within "
                    + config.connectTimeout().toMillis() + " ms");
        } catch (HttpTimeoutException e) {
            return new SendResult.Ambiguous("no response from " + endpoint(request) + " within " + config.requestTimeout().toMillis()
                    + " ms after the request was sent");
        } catch (IOException e) {
            if (causedBy(e, SSLHandshakeException.class)) {
                return new SendResult.Transient("http-tls", "TLS handshake with " + endpoint(request) + " failed (" + describe(rootCause(e))
                        + "; is the certificate issued by a CA in MAILROOM_HTTP_TRUSTSTORE, or the JDK's, and for this host?)");
            }
            if (neverConnected(e)) {
                return new SendResult.Transient("http-connect", "cannot connect to " + endpoint(request) + " (" + describe(e) + ")");
            }
            return new SendResult.Ambiguous("connection to " + endpoint(request) + " failed while the request may have been in flight ("
                    + describe(e) + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new SendResult.Ambiguous("interrupted while waiting for " + endpoint(request));
        }
        SendResult result = classify(response.statusCode(), response.body(),
                RetryAfter.parse(response.headers().firstValue("Retry-After").orElse(null), clock.instant()));
        log.debug("HTTP mail API answered {} for key {}", response.statusCode(), idempotencyKey);
        return result;
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
        client.close();
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

    // Failures that happen before a single byte of the request could reach the provider.
    private static boolean neverConnected(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof UnresolvedAddressException || t instanceof SSLHandshakeException) {
                return true;
            }
            if (t.getCause() == t) {
                break;
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
