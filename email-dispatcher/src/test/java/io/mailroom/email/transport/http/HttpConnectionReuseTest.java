package io.mailroom.email.transport.http;

import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.nio.channels.SelectableChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connections are kept and reused, never more than {@code MAILROOM_HTTP_POOL_SIZE}, and
 * {@code MAILROOM_HTTP_VERSION} decides what is spoken on them: against a provider (Jetty, HTTP/1.1
 * and cleartext HTTP/2 on one port) that counts the TCP connections it accepts and the HTTP version
 * and headers of each request.
 */
class HttpConnectionReuseTest {

    static Server server;
    static URI baseUrl;
    static final AtomicInteger accepted = new AtomicInteger();
    static final AtomicInteger http1 = new AtomicInteger();
    static final AtomicInteger http2 = new AtomicInteger();
    static final AtomicInteger upgrades = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        server = new Server();
        HttpConfiguration http = new HttpConfiguration();
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http), new HTTP2CServerConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.getSelectorManager().addEventListener(new SelectorManager.AcceptListener() {
            @Override
            public void onAccepted(SelectableChannel channel) {
                accepted.incrementAndGet();
            }
        });
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws IOException {
                Content.Source.consumeAll(request);
                (request.getConnectionMetaData().getHttpVersion() == HttpVersion.HTTP_2 ? http2 : http1).incrementAndGet();
                if (request.getHeaders().contains(HttpHeader.UPGRADE)) {
                    upgrades.incrementAndGet();
                }
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                Content.Sink.write(response, true, "{\"id\":\"msg-" + request.getHeaders().get("Idempotency-Key") + "\"}", callback);
                return true;
            }
        });
        server.start();
        baseUrl = URI.create("http://127.0.0.1:" + connector.getLocalPort());
    }

    @AfterAll
    static void stop() throws Exception {
        server.stop();
    }

    @BeforeEach
    void reset() {
        accepted.set(0);
        http1.set(0);
        http2.set(0);
        upgrades.set(0);
    }

    @Test
    void concurrentSendsShareAtMostPoolSizeConnectionsAndKeepThemForTheNextSends() throws Exception {
        HttpMailConfig config = HttpMailConfig.of(baseUrl, "tok").withPoolSize(4);
        try (HttpMailTransport transport = new HttpMailTransport(config)) {
            assertThat(sendConcurrently(transport, 8, 10)).hasSize(80).allMatch(r -> r instanceof SendResult.Sent);
            int afterBurst = accepted.get();
            assertThat(afterBurst).isBetween(1, 4);

            for (int i = 0; i < 10; i++) {
                assertThat(transport.send(TestEmails.sample(), "email-again-" + i)).isInstanceOf(SendResult.Sent.class);
            }
            assertThat(accepted.get()).as("the kept connections are reused").isEqualTo(afterBurst);
        }
        assertThat(http1.get()).isEqualTo(90);
        assertThat(http2.get()).isZero();
    }

    @Test
    void autoOverPlainHttpSpeaksHttp11WithoutTryingAnUpgrade() throws Exception {
        try (HttpMailTransport transport = new HttpMailTransport(HttpMailConfig.of(baseUrl, "tok"))) {
            assertThat(sendConcurrently(transport, 4, 5)).allMatch(r -> r instanceof SendResult.Sent);
        }
        assertThat(http1.get()).isEqualTo(20);
        assertThat(upgrades.get()).isZero();
    }

    @Test
    void version2SpeaksHttp2WithPriorKnowledgeOverPlainHttpOnOneConnection() throws Exception {
        HttpMailConfig config = HttpMailConfig.of(baseUrl, "tok").withVersion(HttpMailConfig.Version.HTTP_2).withPoolSize(8);
        try (HttpMailTransport transport = new HttpMailTransport(config)) {
            assertThat(sendConcurrently(transport, 8, 10)).hasSize(80).allMatch(r -> r instanceof SendResult.Sent);
            int afterBurst = accepted.get();
            for (int i = 0; i < 10; i++) {
                assertThat(transport.send(TestEmails.sample(), "email-h2-again-" + i)).isInstanceOf(SendResult.Sent.class);
            }
            assertThat(afterBurst).as("one connection carries every concurrent send").isEqualTo(1);
            assertThat(accepted.get()).as("and is kept for the next sends").isEqualTo(1);
        }
        assertThat(http2.get()).isEqualTo(90);
        assertThat(http1.get()).isZero();
    }

    @Test
    void version11NeverSpeaksHttp2() throws Exception {
        HttpMailConfig config = HttpMailConfig.of(baseUrl, "tok").withVersion(HttpMailConfig.Version.HTTP_1_1);
        try (HttpMailTransport transport = new HttpMailTransport(config)) {
            assertThat(transport.send(TestEmails.sample(), "email-11")).isInstanceOf(SendResult.Sent.class);
        }
        assertThat(http1.get()).isEqualTo(1);
        assertThat(http2.get()).isZero();
    }

    private static List<SendResult> sendConcurrently(HttpMailTransport transport, int threads, int each) throws Exception {
        List<Future<List<SendResult>>> futures = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    List<SendResult> results = new ArrayList<>();
                    for (int i = 0; i < each; i++) {
                        results.add(transport.send(TestEmails.sample(), "email-" + thread + "-" + i));
                    }
                    return results;
                }));
            }
        }
        List<SendResult> all = new ArrayList<>();
        for (Future<List<SendResult>> f : futures) {
            all.addAll(f.get());
        }
        return all;
    }
}
