package io.mailroom.email.service;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code mailroom health URL}, the docker compose healthcheck: exit 0 on 200, 1 on anything else or no answer. */
class HealthCommandTest {

    private HttpServer server;
    private volatile int status = 200;

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/health/ready", exchange -> {
            byte[] body = (status == 200 ? "{\"status\":\"UP\"}" : "{\"status\":\"STARTING\"}").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private record Run(int code, String out) {
    }

    private static Run health(String... args) {
        StringWriter out = new StringWriter();
        var cli = MailroomCli.commandLine();
        cli.setOut(new PrintWriter(out, true));
        String[] all = new String[args.length + 1];
        all[0] = "health";
        System.arraycopy(args, 0, all, 1, args.length);
        return new Run(cli.execute(all), out.toString());
    }

    private String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/health/ready";
    }

    @Test
    void readyIsExitZero_notReadyOrNoAnswerIsOne_eachWithOneLine() throws IOException {
        Run ready = health(url());
        assertThat(ready.code()).isZero();
        assertThat(ready.out()).startsWith("ready: ").contains("answered 200").contains("UP");

        status = 503;
        Run starting = health(url());
        assertThat(starting.code()).isEqualTo(1);
        assertThat(starting.out()).startsWith("not ready: ").contains("answered 503").contains("STARTING");

        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        Run nobody = health("http://127.0.0.1:" + closed + "/health/ready", "--timeout", "2s");
        assertThat(nobody.code()).isEqualTo(1);
        assertThat(nobody.out()).startsWith("not ready: ").contains("did not answer").hasLineCount(1);
    }
}
