package io.mailroom.orders;

import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.net.http.HttpClient;
import java.time.Duration;

/**
 * The order API on a free loopback port over the test class's database, and an HTTP/1.1 client for
 * it, for the class's whole run. Register it after the {@link PostgresExtension} it serves.
 */
final class OrderApiExtension implements BeforeAllCallback, AfterAllCallback {

    private final PostgresExtension pg;
    private OrderServer server;
    private HttpClient http;

    OrderApiExtension(PostgresExtension pg) {
        this.pg = pg;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        server = OrderServer.start(pg.dataSource(), HttpSettings.of("127.0.0.1", 0));
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server != null) {
            server.stop();
        }
        if (http != null) {
            http.close();
        }
    }

    OrderServer server() {
        return server;
    }

    HttpClient http() {
        return http;
    }
}
