package io.mailroom.bench;

import io.mailroom.email.transport.http.JsonMailApiAdapter;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.SelectableChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The loopback provider of {@link HttpClients}, in a process of its own: {@code POST /v1/emails}
 * answered at once with {@code 200 {"id":"stub-<key>"}} when the bearer token, an
 * {@code Idempotency-Key} and a body are there (else 401 or 400, counted as refused). One plain
 * connector speaks HTTP/1.1, HTTP/2 with prior knowledge, and the HTTP/1.1 {@code Upgrade: h2c}
 * handshake, so every client can be tried on cleartext HTTP/2 the way it does it.
 *
 * <p>It counts TCP connections accepted (the selector's accept events, so an upgraded connection
 * counts once) and requests by the HTTP version they arrived in. Protocol, one line each way:
 * {@code READY <port>} once it listens; {@code COUNT} is answered
 * {@code COUNT <accepted connections> <HTTP/1.1 requests> <HTTP/2 requests> <refused>};
 * {@code STOP} or the end of input ends the process. Token in {@code $BENCH_STUB_TOKEN}.
 */
public final class HttpClientsStubMain {

    private final String authorization;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong http1 = new AtomicLong();
    private final AtomicLong http2 = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    private HttpClientsStubMain(String token) {
        this.authorization = "Bearer " + token;
    }

    public static void main(String[] args) throws Exception {
        Logging.configure();
        String token = System.getenv(StubProviderMain.TOKEN_ENV);
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("the stub needs its bearer token in $" + StubProviderMain.TOKEN_ENV);
        }
        new HttpClientsStubMain(token).run();
    }

    private void run() throws Exception {
        Server server = new Server(new QueuedThreadPool(200, 8, 60_000));
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendDateHeader(false);
        HTTP2CServerConnectionFactory h2c = new HTTP2CServerConnectionFactory(http);
        // more than any benchmark concurrency, so a client on one HTTP/2 connection is never held back by the stub
        h2c.setMaxConcurrentStreams(256);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http), h2c);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        connector.setAcceptQueueSize(1_000);
        connector.setIdleTimeout(120_000);
        connector.getSelectorManager().addEventListener(new SelectorManager.AcceptListener() {
            @Override
            public void onAccepted(SelectableChannel channel) {
                accepted.incrementAndGet();
            }
        });
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract.NonBlocking() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                emails(request, response, callback);
                return true;
            }
        });
        server.start();
        try {
            System.out.println("READY " + connector.getLocalPort());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null && !line.equals("STOP")) {
                System.out.println(line.equals("COUNT")
                        ? "COUNT " + accepted.get() + " " + http1.get() + " " + http2.get() + " " + refused.get()
                        : "UNKNOWN " + line);
                System.out.flush();
            }
        } finally {
            server.stop();
        }
    }

    private void emails(Request request, Response response, Callback callback) {
        String key = request.getHeaders().get("Idempotency-Key");
        boolean valid = request.getMethod().equals("POST") && Request.getPathInContext(request).equals(JsonMailApiAdapter.PATH)
                && authorization.equals(request.getHeaders().get(HttpHeader.AUTHORIZATION));
        // the body is read whole, as a provider would, but not parsed: the stub's CPU is not what is measured
        Content.Source.asString(request, StandardCharsets.UTF_8, new Promise<>() {
            @Override
            public void succeeded(String body) {
                if (!valid) {
                    answer(response, callback, 401, "{\"message\":\"invalid token or endpoint\"}");
                } else if (key == null || key.isBlank() || body.isEmpty()) {
                    answer(response, callback, 400, "{\"message\":\"Idempotency-Key header and a body are required\"}");
                } else {
                    (request.getConnectionMetaData().getHttpVersion() == HttpVersion.HTTP_2 ? http2 : http1).incrementAndGet();
                    answer(response, callback, 200, "{\"id\":\"stub-" + key + "\"}");
                }
            }

            @Override
            public void failed(Throwable failure) {
                callback.failed(failure);
            }
        });
    }

    private void answer(Response response, Callback callback, int status, String json) {
        if (status != 200) {
            refused.incrementAndGet();
        }
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
        response.write(true, java.nio.ByteBuffer.wrap(bytes), callback);
    }
}
